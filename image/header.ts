import { createHash, createPrivateKey, sign, verify } from 'node:crypto'
import { ed25519PublicKey } from '../hal/index.js'
import type { Variant } from '../protocol/index.js'
import { ImageFormatError } from './errors.js'

/**
 * A signed image: a fixed 152-byte header, then the payload (a ustar archive).
 *
 *   0  magic "HEMIMG01"            48  payload length, u64
 *   8  kind, u8 (1 fw, 2 ui)       56  payload SHA-256, 32 bytes
 *   9  hardware, u8 (1 P, 2 E)     88  Ed25519 signature by the vendor key over bytes 0..87
 *  10  reserved, u16 = 0
 *  12  anti-rollback floor, u32
 *  16  version, 32 bytes UTF-8, NUL padded
 *
 * Big-endian throughout. The signature covers the payload through its hash, so a check can
 * stream the payload instead of holding it.
 */
export const IMAGE_MAGIC = Buffer.from('HEMIMG01')
export const HEADER_BYTES = 152
const SIGNED_BYTES = 88
/** What the upload endpoints accept (device contract §3): header and payload together. */
export const MAX_IMAGE_BYTES = 16 * 1024 * 1024
export const MAX_PAYLOAD_BYTES = MAX_IMAGE_BYTES - HEADER_BYTES
const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,31}$/

export type ImageKind = 'fw' | 'ui'
const KIND_CODES: Record<ImageKind, number> = { fw: 1, ui: 2 }
const HARDWARE_BITS: Record<Variant, number> = { P: 1, E: 2 }

export interface ImageHeader {
  kind: ImageKind
  /** The variants the image runs on. */
  hardware: Variant[]
  /** The image's anti-rollback level: a device whose floor is above it refuses it. */
  floor: number
  version: string
  payloadLength: number
  payloadSha256: Uint8Array
}

export interface ParsedHeader extends ImageHeader {
  /** The bytes the signature covers, and the signature: nothing here is trusted until it verifies. */
  signed: Uint8Array
  signature: Uint8Array
}

/** Builds a signed image around `payload` with the vendor's Ed25519 private key (PEM). */
export function buildImage(
  header: Omit<ImageHeader, 'payloadLength' | 'payloadSha256'>,
  payload: Uint8Array,
  vendorKeyPem: string,
): Buffer {
  const signed = encodeSigned({
    ...header,
    payloadLength: payload.length,
    payloadSha256: createHash('sha256').update(payload).digest(),
  })
  const signature = sign(null, signed, createPrivateKey(vendorKeyPem))
  return Buffer.concat([signed, signature, payload])
}

/** Reads a header's fields; ImageFormatError when they are not a well-formed header. */
export function parseHeader(bytes: Uint8Array): ParsedHeader {
  if (bytes.length < HEADER_BYTES)
    throw new ImageFormatError(`an image starts with a ${HEADER_BYTES}-byte header; this has ${bytes.length} bytes`)
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, HEADER_BYTES)
  if (!view.subarray(0, 8).equals(IMAGE_MAGIC)) throw new ImageFormatError('not a hem image (bad magic)')
  const kind = (Object.keys(KIND_CODES) as ImageKind[]).find((k) => KIND_CODES[k] === view[8])
  if (!kind) throw new ImageFormatError(`unknown image kind ${view[8]}`)
  const bits = view[9]!
  const hardware = (Object.keys(HARDWARE_BITS) as Variant[]).filter((v) => bits & HARDWARE_BITS[v])
  if (hardware.length === 0 || bits & ~3) throw new ImageFormatError(`bad hardware mask ${bits}`)
  if (view.readUInt16BE(10) !== 0) throw new ImageFormatError('reserved header bytes are not zero')
  const versionBytes = view.subarray(16, 48)
  const end = versionBytes.indexOf(0)
  const version = versionBytes.subarray(0, end === -1 ? 32 : end).toString('utf8')
  if (!VERSION.test(version) || (end !== -1 && versionBytes.subarray(end).some((b) => b !== 0)))
    throw new ImageFormatError('bad version field')
  const payloadLength = view.readBigUInt64BE(48)
  if (payloadLength > BigInt(MAX_PAYLOAD_BYTES))
    throw new ImageFormatError(`the payload length ${payloadLength} is over ${MAX_PAYLOAD_BYTES}`)
  return {
    kind,
    hardware,
    floor: view.readUInt32BE(12),
    version,
    payloadLength: Number(payloadLength),
    payloadSha256: new Uint8Array(view.subarray(56, 88)),
    signed: new Uint8Array(view.subarray(0, SIGNED_BYTES)),
    signature: new Uint8Array(view.subarray(SIGNED_BYTES, HEADER_BYTES)),
  }
}

/** Whether the header's signature verifies under the vendor's raw 32-byte Ed25519 public key. */
export function headerSignatureValid(header: ParsedHeader, vendorPublicKey: Uint8Array): boolean {
  return verify(null, header.signed, ed25519PublicKey(vendorPublicKey), header.signature)
}

function encodeSigned(header: ImageHeader): Buffer {
  if (!VERSION.test(header.version))
    throw new RangeError(`the version must match ${VERSION}: ${JSON.stringify(header.version)}`)
  if (!Number.isInteger(header.floor) || header.floor < 0 || header.floor > 0xffffffff)
    throw new RangeError('the floor must be a u32')
  if (header.hardware.length === 0 || header.hardware.some((v) => !(v in HARDWARE_BITS)))
    throw new RangeError('the hardware must name P, E or both')
  if (header.payloadLength > MAX_PAYLOAD_BYTES)
    throw new RangeError(`the payload must be at most ${MAX_PAYLOAD_BYTES} bytes`)
  const out = Buffer.alloc(SIGNED_BYTES)
  IMAGE_MAGIC.copy(out, 0)
  out[8] = KIND_CODES[header.kind]
  out[9] = header.hardware.reduce((bits, v) => bits | HARDWARE_BITS[v], 0)
  out.writeUInt32BE(header.floor, 12)
  out.write(header.version, 16, 'utf8')
  out.writeBigUInt64BE(BigInt(header.payloadLength), 48)
  Buffer.from(header.payloadSha256).copy(out, 56)
  return out
}
