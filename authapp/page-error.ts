/** A failure the page tells in its own words, shown as it is. */
export class PageError extends Error {
  override readonly name: string = 'PageError'
}

/** A pairing link of another broker: this page talks to its own origin only (its CSP's `connect-src 'self'`). */
export class OtherOriginError extends PageError {
  override readonly name = 'OtherOriginError'
}

/** No camera, no permission for it, or a browser that cannot read a QR code from it. */
export class CameraError extends PageError {
  override readonly name = 'CameraError'
}
