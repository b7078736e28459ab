/** The bus (or the service behind a subject) cannot be reached now; callers answer 503. */
export class BusUnavailableError extends Error {
  override readonly name = 'BusUnavailableError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
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
