/** Bytes that are not a well-formed image or archive: a structural fault, found before any trust. */
export class ImageFormatError extends Error {
  override readonly name = 'ImageFormatError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
