/** The bus (or the service behind a subject) cannot be reached now; callers answer 503. */
export class BusUnavailableError extends Error {
  override readonly name = 'BusUnavailableError'
  /** Nobody answers the subject: no such service runs now, so the command reached none and did not run. */
  readonly noResponder: boolean
  constructor(message: string, options?: { cause?: unknown; noResponder?: boolean }) {
    super(message, options)
    this.noResponder = options?.noResponder === true
  }
}

/**
 * A service took the command (it has a responder) but did not answer before the command's
 * deadline, or the connection dropped after the command was sent; the operation may still
 * complete. Callers answer 504, never 503: a slow operation is not an unreachable service, and
 * one that may have run must not be retried as if it had not.
 */
export class BusTimeoutError extends Error {
  override readonly name = 'BusTimeoutError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** nats-server could not be started or exited while it should run. */
export class NatsServerError extends Error {
  override readonly name = 'NatsServerError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
