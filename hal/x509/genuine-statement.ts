// `genuine`: who the enclave is and which attestation key it holds, signed.
//
//   "HEMG" | version 1 | kind (1 device, 2 factory) | devid (8 bytes) | n (1 byte) |
//   genuineId (n ASCII bytes) | SHA-256(attestation key SPKI DER) (32 bytes) | signature
//
// The signature covers every byte before it: ECDSA with SHA-256 as r || s (IEEE P1363), or
// RSA PKCS#1 v1.5 with SHA-256 for an RSA factory root. Kind 1 is the device's self-statement
// (GET attestation before provisioning), signed by the attestation key; kind 2 is the
// factory's statement (provisioning), signed by the factory root key.
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'

export type GenuineKind = 'device' | 'factory'

export interface GenuineClaims {
  kind: GenuineKind
  /** 16 lowercase hex chars. */
  devid: string
  genuineId: string
  /** SHA-256 of the attestation key's SPKI DER: see `attestationKeyHash`. */
  keyHash: Uint8Array
}

export interface GenuineStatement extends GenuineClaims {
  /** The bytes the signature covers. */
  signed: Uint8Array
  signature: Uint8Array
}

const MAGIC = Buffer.from('HEMG')
const VERSION = 1
const KIND_BYTES: Record<GenuineKind, number> = { device: 1, factory: 2 }
const HASH_BYTES = 32
const GENUINE_ID = /^[\x21-\x7e]{1,255}$/

/** SHA-256 of the key's canonical SPKI DER (accepts any SPKI encoding of the same key). */
export function attestationKeyHash(spkiDer: Uint8Array): Uint8Array {
  const canonical = createPublicKey({ key: Buffer.from(spkiDer), format: 'der', type: 'spki' }).export({
    type: 'spki',
    format: 'der',
  })
  return new Uint8Array(createHash('sha256').update(canonical).digest())
}

export function signGenuine(claims: GenuineClaims, privateKey: KeyObject): Uint8Array {
  const signed = encodeClaims(claims)
  const signature = sign('sha256', signed, { key: privateKey, dsaEncoding: 'ieee-p1363' })
  return new Uint8Array(Buffer.concat([signed, signature]))
}

/** The statement in `bytes`, or undefined when they are not one. Checks no signature. */
export function parseGenuine(bytes: Uint8Array): GenuineStatement | undefined {
  const data = Buffer.from(bytes)
  if (data.length < 15 || !data.subarray(0, 4).equals(MAGIC) || data[4] !== VERSION) return undefined
  const kind = (Object.keys(KIND_BYTES) as GenuineKind[]).find((k) => KIND_BYTES[k] === data[5])
  const idLength = data[14] ?? 0
  const signatureStart = 15 + idLength + HASH_BYTES
  if (!kind || data.length <= signatureStart) return undefined
  const genuineId = data.subarray(15, 15 + idLength).toString('latin1')
  if (!GENUINE_ID.test(genuineId)) return undefined
  return {
    kind,
    devid: data.subarray(6, 14).toString('hex'),
    genuineId,
    keyHash: new Uint8Array(data.subarray(15 + idLength, signatureStart)),
    signed: new Uint8Array(data.subarray(0, signatureStart)),
    signature: new Uint8Array(data.subarray(signatureStart)),
  }
}

export function verifyGenuine(statement: GenuineStatement, publicKey: KeyObject): boolean {
  try {
    return verify('sha256', statement.signed, { key: publicKey, dsaEncoding: 'ieee-p1363' }, statement.signature)
  } catch {
    // A key type that cannot verify this way (Ed25519, say) verifies nothing.
    return false
  }
}

function encodeClaims({ kind, devid, genuineId, keyHash }: GenuineClaims): Buffer {
  if (!/^[0-9a-f]{16}$/.test(devid)) throw new RangeError(`devid ${JSON.stringify(devid)} is not 16 hex chars`)
  if (!GENUINE_ID.test(genuineId))
    throw new RangeError(`genuineId ${JSON.stringify(genuineId)} is not 1-255 printable ASCII chars`)
  if (keyHash.length !== HASH_BYTES) throw new RangeError('keyHash is not 32 bytes')
  return Buffer.concat([
    MAGIC,
    Uint8Array.of(VERSION, KIND_BYTES[kind]),
    Buffer.from(devid, 'hex'),
    Uint8Array.of(genuineId.length),
    Buffer.from(genuineId, 'latin1'),
    keyHash,
  ])
}
