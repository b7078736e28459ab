// An image's header, read: free of node, so that the management app checks a picked file as the
// device will before sending it.
import type { Variant } from '../protocol/browser.js'
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
export const IMAGE_MAGIC = new TextEncoder().encode('HEMIMG01')
export const HEADER_BYTES = 152
export const SIGNED_BYTES = 88
/** What the upload endpoints accept (device contract §3): header and payload together. */
export const MAX_IMAGE_BYTES = 16 * 1024 * 1024
export const MAX_PAYLOAD_BYTES = MAX_IMAGE_BYTES - HEADER_BYTES
export const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,31}$/

export type ImageKind = 'fw' | 'ui'
export const KIND_CODES: Record<ImageKind, number> = { fw: 1, ui: 2 }
export const HARDWARE_BITS: Record<Variant, number> = { P: 1, E: 2 }

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

/** Reads a header's fields; ImageFormatError when they are not a well-formed header. */
export function parseHeader(bytes: Uint8Array): ParsedHeader {
  if (bytes.length < HEADER_BYTES)
    throw new ImageFormatError(`an image starts with a ${HEADER_BYTES}-byte header; this has ${bytes.length} bytes`)
  const header = bytes.subarray(0, HEADER_BYTES)
  const view = new DataView(header.buffer, header.byteOffset, HEADER_BYTES)
  if (IMAGE_MAGIC.some((byte, i) => header[i] !== byte)) throw new ImageFormatError('not a hem image (bad magic)')
  const kind = (Object.keys(KIND_CODES) as ImageKind[]).find((k) => KIND_CODES[k] === header[8])
  if (!kind) throw new ImageFormatError(`unknown image kind ${header[8]}`)
  const bits = header[9]!
  const hardware = (Object.keys(HARDWARE_BITS) as Variant[]).filter((v) => bits & HARDWARE_BITS[v])
  if (hardware.length === 0 || bits & ~3) throw new ImageFormatError(`bad hardware mask ${bits}`)
  if (view.getUint16(10) !== 0) throw new ImageFormatError('reserved header bytes are not zero')
  const versionBytes = header.subarray(16, 48)
  const end = versionBytes.indexOf(0)
  const version = new TextDecoder().decode(versionBytes.subarray(0, end === -1 ? 32 : end))
  if (!VERSION.test(version) || (end !== -1 && versionBytes.subarray(end).some((b) => b !== 0)))
    throw new ImageFormatError('bad version field')
  const payloadLength = view.getBigUint64(48)
  if (payloadLength > BigInt(MAX_PAYLOAD_BYTES))
    throw new ImageFormatError(`the payload length ${payloadLength} is over ${MAX_PAYLOAD_BYTES}`)
  return {
    kind,
    hardware,
    floor: view.getUint32(12),
    version,
    payloadLength: Number(payloadLength),
    payloadSha256: header.slice(56, 88),
    signed: header.slice(0, SIGNED_BYTES),
    signature: header.slice(SIGNED_BYTES, HEADER_BYTES),
  }
}
