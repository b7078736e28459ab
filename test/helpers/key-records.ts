import { randomBytes } from 'node:crypto'
import { keyTypes, type KeyRecord, type KeyType } from '../../protocol/index.js'

/** Secret and public key sizes of the asymmetric types; post-quantum keys keep their seed (FIPS 203, 204). */
const SIZES: Partial<Record<KeyType, [secret: number, publicKey: number]>> = {
  CURVE25519: [32, 32],
  CURVE448: [56, 56],
  ED25519: [32, 32],
  ED448: [57, 57],
  SECP256R1: [32, 33],
  SECP384R1: [48, 49],
  SECP521R1: [66, 67],
  SECP256K1: [32, 33],
  MLKEM512: [64, 800],
  MLKEM768: [64, 1184],
  MLKEM1024: [64, 1568],
  MLDSA44: [32, 1312],
  MLDSA65: [32, 1952],
  MLDSA87: [32, 2592],
}

/** Plain byte arrays, as the repository hands back (a Buffer would compare unequal). */
export const randomBytesArray = (n: number) => Uint8Array.from(randomBytes(n))

let serial = 0

/** A valid record of `type` with random material; `imported` leaves out the secret of an asymmetric key. */
export function randomKeyRecord(type: KeyType, extra: Partial<KeyRecord> & { imported?: boolean } = {}): KeyRecord {
  const { imported = false, ...fields } = extra
  const info = keyTypes[type]
  const kid = randomBytes(16).toString('hex')
  const base = { kid, type, label: `${type} ${++serial}`, created: 1_700_000_000, updated: 1_700_000_000 }
  if (info.kind === 'aes' || info.kind === 'hmac') return { ...base, secret: randomBytesArray(info.bytes), ...fields }
  const [secret, pub] = SIZES[type]!
  const publicKey = randomBytesArray(pub)
  if (info.kind === 'ec') publicKey[0] = 2
  return {
    ...base,
    ...(info.kind === 'ec' ? { mode: 'ECDH,ExDSA' as const } : {}),
    ...(imported ? {} : { secret: randomBytesArray(secret) }),
    publicKey,
    ...fields,
  }
}
