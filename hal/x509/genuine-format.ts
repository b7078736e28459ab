// `genuine`'s bytes: who the enclave is and which attestation key it holds, with a signature.
//
//   "HEMG" | version 1 | kind (1 device, 2 factory) | devid (8 bytes) | n (1 byte) |
//   genuineId (n ASCII bytes) | SHA-256(attestation key SPKI DER) (32 bytes) | signature
//
// The signature covers every byte before it: ECDSA with SHA-256 as r || s (IEEE P1363), or
// RSA PKCS#1 v1.5 with SHA-256 for an RSA factory root. Kind 1 is the device's self-statement
// (GET attestation before provisioning), signed by the attestation key; kind 2 is the
// factory's statement (provisioning), signed by the factory root key. Free of node: the
// management app reads a device's statement with this code before it has an owner.
import { bytesToHex } from '@noble/hashes/utils.js'

export type GenuineKind = 'device' | 'factory'

export interface GenuineClaims {
  kind: GenuineKind
  /** 16 lowercase hex chars. */
  devid: string
  genuineId: string
  /** SHA-256 of the attestation key's SPKI DER. */
  keyHash: Uint8Array
}

export interface GenuineStatement extends GenuineClaims {
  /** The bytes the signature covers. */
  signed: Uint8Array
  signature: Uint8Array
}

const MAGIC = [0x48, 0x45, 0x4d, 0x47] // "HEMG"
const VERSION = 1
const KIND_BYTES: Record<GenuineKind, number> = { device: 1, factory: 2 }
const HASH_BYTES = 32
const GENUINE_ID = /^[\x21-\x7e]{1,255}$/

const ascii = (bytes: Uint8Array) => String.fromCharCode(...bytes)

/** The statement in `bytes`, or undefined when they are not one. Checks no signature. */
export function parseGenuine(bytes: Uint8Array): GenuineStatement | undefined {
  if (bytes.length < 15 || MAGIC.some((byte, i) => bytes[i] !== byte) || bytes[4] !== VERSION) return undefined
  const kind = (Object.keys(KIND_BYTES) as GenuineKind[]).find((k) => KIND_BYTES[k] === bytes[5])
  const idLength = bytes[14] ?? 0
  const signatureStart = 15 + idLength + HASH_BYTES
  if (!kind || bytes.length <= signatureStart) return undefined
  const genuineId = ascii(bytes.subarray(15, 15 + idLength))
  if (!GENUINE_ID.test(genuineId)) return undefined
  return {
    kind,
    devid: bytesToHex(bytes.subarray(6, 14)),
    genuineId,
    keyHash: bytes.slice(15 + idLength, signatureStart),
    signed: bytes.slice(0, signatureStart),
    signature: bytes.slice(signatureStart),
  }
}

/** The bytes a signature covers: the claims encoded. */
export function encodeGenuineClaims({ kind, devid, genuineId, keyHash }: GenuineClaims): Uint8Array {
  if (!/^[0-9a-f]{16}$/.test(devid)) throw new RangeError(`devid ${JSON.stringify(devid)} is not 16 hex chars`)
  if (!GENUINE_ID.test(genuineId))
    throw new RangeError(`genuineId ${JSON.stringify(genuineId)} is not 1-255 printable ASCII chars`)
  if (keyHash.length !== HASH_BYTES) throw new RangeError('keyHash is not 32 bytes')
  return Uint8Array.from([
    ...MAGIC,
    VERSION,
    KIND_BYTES[kind],
    ...(devid.match(/../g) ?? []).map((pair) => parseInt(pair, 16)),
    genuineId.length,
    ...Array.from(genuineId, (char) => char.charCodeAt(0)),
    ...keyHash,
  ])
}
