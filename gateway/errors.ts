// One class for the whole runtime, so that `instanceof` holds for what the bus throws.
export { BusTimeoutError, BusUnavailableError } from '../bus/index.js'

/** A port the gateway was given cannot be listened on (taken by another process, say). */
export class ListenError extends Error {
  override name = 'ListenError'
}

/** A request refused with a definite status; its code and message go to the client as they are. */
export class HttpError extends Error {
  override name = 'HttpError'

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}
