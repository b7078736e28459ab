// The errors a client of the family's notification broker (`/notify/*`, ext-auth-contract §3.4) meets:
// apart from the device's, since a refusal of the cloud says nothing about the device.

/** The broker answered, and not with what the call waits for. `code` is its `error` field, `reason` a 410's. */
export class BrokerRefusedError extends Error {
  override name = 'BrokerRefusedError'
  readonly code: string | undefined
  readonly reason: string | undefined

  constructor(
    readonly status: number,
    readonly body: unknown,
    /** What was asked, as `METHOD /notify/...`. */
    readonly what: string,
  ) {
    const { error, message, reason } = (typeof body === 'object' && body !== null ? body : {}) as Record<
      string,
      unknown
    >
    const told = [message, reason, error].find((field) => typeof field === 'string') as string | undefined
    super(`${what}: the broker answered ${status}${told === undefined ? '' : ` (${printable(told)})`}`)
    this.code = typeof error === 'string' ? error : undefined
    this.reason = typeof reason === 'string' ? reason : undefined
  }
}

/** The broker could not be reached, or the connection broke (`cause`: the fetch's error). */
export class BrokerUnreachableError extends Error {
  override name = 'BrokerUnreachableError'
  constructor(
    readonly url: string,
    options: { cause: unknown },
  ) {
    super(`cannot reach the broker at ${url}: ${(options.cause as Error)?.message ?? String(options.cause)}`, options)
  }
}

/** The broker answered with success, but not in the shape the contract gives that answer. */
export class UnexpectedBrokerAnswerError extends Error {
  override name = 'UnexpectedBrokerAnswerError'
}

/** A text from the network, safe to print on a terminal: no control characters (escape sequences), at most 200. */
export function printable(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?')
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean
}
