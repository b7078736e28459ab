// Known-answer tests: each engine must reproduce the standards' vectors (vectors.ts and the
// *-vectors.ts files) exactly, and refuse a forged GCM tag and a bad CBC padding, before the
// device trusts it.
import { AuthenticationError, CipherError } from './errors.js'
import { hashWrapKats } from './hash-wrap-kats.js'
import {
  bytes,
  compressed,
  hex,
  runKatList,
  runKatListStepwise,
  throws,
  type Kat as KatOf,
  type KatResult,
} from './kat-support.js'
import { signatureKats } from './signature-kats.js'
import type { CryptoEngine } from './types.js'
import {
  CBC_VECTORS,
  DH_VECTORS,
  ECB_VECTORS,
  GCM_VECTORS,
  HKDF_VECTORS,
  SP800_38A_IV,
  SP800_38A_PLAINTEXT,
  type DhVector,
} from './vectors.js'

export type { KatResult } from './kat-support.js'

type Kat = KatOf<CryptoEngine>

function blockKats(): Kat[] {
  const plaintext = bytes(SP800_38A_PLAINTEXT)
  const iv = bytes(SP800_38A_IV)
  const ecb = ECB_VECTORS.flatMap((v): Kat[] => [
    { name: v.encrypt, passes: (e) => hex(e.aesEcbEncrypt(bytes(v.key), plaintext)) === v.ciphertext },
    {
      name: v.decrypt,
      passes: (e) => hex(e.aesEcbDecrypt(bytes(v.key), bytes(v.ciphertext))) === SP800_38A_PLAINTEXT,
    },
  ])
  const cbc = CBC_VECTORS.flatMap((v): Kat[] => {
    const padded = v.ciphertext + v.paddingBlock
    return [
      { name: v.encrypt, passes: (e) => hex(e.aesCbcEncrypt(bytes(v.key), iv, plaintext)) === padded },
      {
        name: v.decrypt,
        passes: (e) => hex(e.aesCbcDecrypt(bytes(v.key), iv, bytes(padded))) === SP800_38A_PLAINTEXT,
      },
    ]
  })
  // The standard's last plaintext byte is 0x10 but the 15 before it are not: invalid PKCS#7.
  const unpadded = CBC_VECTORS[0]!
  const badPadding: Kat = {
    name: `${unpadded.decrypt} without the padding block is refused`,
    passes: (e) => throws(() => e.aesCbcDecrypt(bytes(unpadded.key), iv, bytes(unpadded.ciphertext)), CipherError),
  }
  return [...ecb, ...cbc, badPadding]
}

function gcmKats(): Kat[] {
  const kats = GCM_VECTORS.flatMap((v): Kat[] => {
    const [key, iv, aad] = [bytes(v.key), bytes(v.iv), bytes(v.aad)]
    return [
      {
        name: `${v.name} encrypt`,
        passes: (e) => {
          const { ciphertext, tag } = e.aesGcmEncrypt(key, iv, bytes(v.plaintext), aad)
          return hex(ciphertext) === v.ciphertext && hex(tag) === v.tag
        },
      },
      {
        name: `${v.name} decrypt`,
        passes: (e) => hex(e.aesGcmDecrypt(key, iv, bytes(v.ciphertext), bytes(v.tag), aad)) === v.plaintext,
      },
    ]
  })
  const forged = GCM_VECTORS.find((v) => v.aad !== '')!
  const forgedTag = bytes(forged.tag)
  forgedTag[0] = forgedTag[0]! ^ 0x01
  const openForged = (e: CryptoEngine) =>
    e.aesGcmDecrypt(bytes(forged.key), bytes(forged.iv), bytes(forged.ciphertext), forgedTag, bytes(forged.aad))
  kats.push({
    name: `${forged.name} with a flipped tag bit is refused`,
    passes: (e) => throws(() => openForged(e), AuthenticationError),
  })
  return kats
}

function dhKats(v: DhVector): Kat[] {
  const publicKey = (e: CryptoEngine, privateKey: string) =>
    hex(e.generateKeyPair(v.curve, () => bytes(privateKey)).publicKey)
  const shared = (e: CryptoEngine, privateKey: string, peer: string) =>
    hex(e.ecdh(v.curve, bytes(privateKey), bytes(peer)))
  return [
    {
      name: `${v.name} public keys`,
      passes: (e) =>
        publicKey(e, v.alicePrivate) === compressed(v.curve, v.alicePublic) &&
        publicKey(e, v.bobPrivate) === compressed(v.curve, v.bobPublic),
    },
    {
      name: `${v.name} public key of the private key`,
      passes: (e) => hex(e.publicKey(v.curve, bytes(v.alicePrivate))) === compressed(v.curve, v.alicePublic),
    },
    {
      // One side takes the peer key as published, the other compressed, so both forms are covered.
      name: `${v.name} shared secret`,
      passes: (e) =>
        shared(e, v.alicePrivate, v.bobPublic) === v.shared &&
        shared(e, v.bobPrivate, compressed(v.curve, v.alicePublic)) === v.shared,
    },
  ]
}

function hkdfKats(): Kat[] {
  return HKDF_VECTORS.map((v) => ({
    name: v.name,
    passes: (e) => {
      const salt = v.salt === undefined ? undefined : bytes(v.salt)
      return hex(e.hkdfSha256(bytes(v.ikm), salt, bytes(v.info), v.okm.length / 2)) === v.okm
    },
  }))
}

function allKats(): Kat[] {
  return [
    ...blockKats(),
    ...gcmKats(),
    ...DH_VECTORS.flatMap(dhKats),
    ...hkdfKats(),
    ...[...signatureKats(), ...hashWrapKats()].map((kat) => ({ ...kat, late: true })),
  ]
}

export const KAT_NAMES: readonly string[] = allKats().map((kat) => kat.name)

/** The KATs of code both engines share: noble's run covers them for native too. */
export const SHARED_KAT_NAMES: ReadonlySet<string> = new Set(
  allKats()
    .filter((kat) => kat.shared)
    .map((kat) => kat.name),
)

/**
 * Every KAT, or without (`shared: false`) those of the code both engines share, or without
 * (`own: false`) those of the engine's own code; `late: false` leaves out the engine's own KATs
 * of code no boot path uses, `late: 'only'` runs just those.
 */
export function runKats(engine: CryptoEngine, parts: KatParts = {}): KatResult {
  return runKatList(selectKats(parts), engine)
}

/** `runKats`, yielding to `pause` before each KAT. */
export function runKatsStepwise(engine: CryptoEngine, pause: () => Promise<void>, parts: KatParts = {}) {
  return runKatListStepwise(selectKats(parts), engine, pause)
}

interface KatParts {
  shared?: boolean
  own?: boolean
  late?: boolean | 'only'
}

function selectKats({ shared = true, own = true, late = true }: KatParts): Kat[] {
  const ownWanted = (kat: Kat) => own && (late === 'only' ? kat.late === true : late || kat.late !== true)
  return allKats().filter((kat) => (kat.shared ? shared && late !== 'only' : ownWanted(kat)))
}
