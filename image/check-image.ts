import { createHash, timingSafeEqual } from 'node:crypto'
import type { Variant } from '../protocol/index.js'
import { ImageFormatError } from './errors.js'
import { HEADER_BYTES, headerSignatureValid, parseHeader, type ImageHeader, type ImageKind } from './header.js'
import { walkArchive, type ArchiveSource } from './tar.js'

const PIECE = 1024 * 1024

/** Why an image is refused; the order is the order of the checks. */
export type RejectReason = 'format' | 'signature' | 'integrity' | 'kind' | 'hardware' | 'floor'

export type ImageVerdict =
  { ok: true; header: ImageHeader; sha256: string } | { ok: false; reason: RejectReason; message: string }

export interface ImageExpectations {
  /** The vendor's raw Ed25519 public key (`version.fwk`). */
  vendorKey: Uint8Array
  kind?: ImageKind
  variant?: Variant
  /** The device's anti-rollback floor: an image below it is refused. */
  floor?: number
}

/**
 * Checks an image in the order that trusts nothing early: the header's shape, its signature
 * (which covers the payload's length and hash), the length, the payload's hash streamed in
 * 1 MiB pieces, the archive's entries, and only then what the signed header says (kind,
 * hardware, anti-rollback floor). `sha256` of the verdict is the whole image's hash.
 */
export async function checkImage(
  source: ArchiveSource,
  size: number,
  expect: ImageExpectations,
): Promise<ImageVerdict> {
  const reject = (reason: RejectReason, message: string): ImageVerdict => ({ ok: false, reason, message })
  if (size < HEADER_BYTES) return reject('format', `${size} bytes is shorter than an image header`)
  const headerBytes = await source.read(0, HEADER_BYTES)
  let header
  try {
    header = parseHeader(headerBytes)
  } catch (err) {
    if (err instanceof ImageFormatError) return reject('format', err.message)
    throw err
  }
  if (!headerSignatureValid(header, expect.vendorKey))
    return reject('signature', 'the header signature does not verify under the vendor key')
  if (size !== HEADER_BYTES + header.payloadLength) {
    return reject('integrity', `the image is ${size} bytes; its header says ${HEADER_BYTES + header.payloadLength}`)
  }
  const whole = createHash('sha256').update(headerBytes)
  const payloadHash = createHash('sha256')
  for (let at = 0; at < header.payloadLength; at += PIECE) {
    const piece = await source.read(HEADER_BYTES + at, Math.min(PIECE, header.payloadLength - at))
    payloadHash.update(piece)
    whole.update(piece)
  }
  if (!timingSafeEqual(payloadHash.digest(), header.payloadSha256))
    return reject('integrity', 'the payload does not match the signed hash')
  try {
    const payload: ArchiveSource = { read: (position, length) => source.read(HEADER_BYTES + position, length) }
    await walkArchive(payload, { length: header.payloadLength }, async () => undefined)
  } catch (err) {
    if (err instanceof ImageFormatError) return reject('format', `the payload archive: ${err.message}`)
    throw err
  }
  const { signed: _signed, signature: _signature, ...fields } = header
  if (expect.kind && header.kind !== expect.kind)
    return reject('kind', `a ${header.kind} image where a ${expect.kind} image belongs`)
  if (expect.variant && !header.hardware.includes(expect.variant)) {
    return reject('hardware', `the image is for ${header.hardware.join(' and ')}, not ${expect.variant}`)
  }
  if (expect.floor !== undefined && header.floor < expect.floor) {
    return reject(
      'floor',
      `the image's anti-rollback level ${header.floor} is below the device's floor ${expect.floor}`,
    )
  }
  return { ok: true, header: fields, sha256: whole.digest('hex') }
}
