// What a picked file claims to be, read from its header before anything is sent: a file that is
// no image, or the other kind, is refused here; the signature and the rest only the device checks.
import { ImageFormatError, HEADER_BYTES, type ImageKind, MAX_IMAGE_BYTES, parseHeader } from '../../../image/browser.js'
import { InputError } from '../../feedback.js'

export type { ImageKind }
export { MAX_IMAGE_BYTES }
export const KIND_NAMES: Record<ImageKind, string> = { fw: 'firmware', ui: 'management app' }

export interface ImageClaims {
  kind: ImageKind
  version: string
  /** The variants its hardware mask names. */
  hardware: string[]
  level: number
}

/** The header's claims, or an InputError saying why the file is not an image of `kind`. */
export async function readImageClaims(file: File, kind: ImageKind): Promise<ImageClaims> {
  if (file.size > MAX_IMAGE_BYTES)
    throw new InputError(`An image is at most 16 MiB (${MAX_IMAGE_BYTES} bytes); this file has ${file.size} bytes.`)
  let header
  try {
    header = parseHeader(new Uint8Array(await file.slice(0, HEADER_BYTES).arrayBuffer()))
  } catch (error) {
    if (error instanceof ImageFormatError) throw new InputError(`This file is not a HEM image: ${error.message}.`)
    throw error
  }
  if (header.kind !== kind)
    throw new InputError(`This is a ${KIND_NAMES[header.kind]} image, not a ${KIND_NAMES[kind]} one.`)
  return { kind, version: header.version, hardware: header.hardware, level: header.floor }
}

/** "firmware 1.2.0 for P and E, anti-rollback level 0". */
export function describeClaims(claims: ImageClaims): string {
  const hardware = claims.hardware.length ? claims.hardware.join(' and ') : 'no hardware'
  return `${KIND_NAMES[claims.kind]} ${claims.version} for ${hardware}, anti-rollback level ${claims.level}`
}
