/** The bus (or the service behind a subject) cannot be reached now; callers answer 503. */
export class BusUnavailableError extends Error {
  override readonly name = 'BusUnavailableError'
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
