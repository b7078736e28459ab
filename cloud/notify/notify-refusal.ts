import type { CloudReply } from '../types.js'

/**
 * A request the broker refuses: its status, the snake_case `error` of contract §3.0 and a message that
 * names what was wrong but never a value (no MAC, no key, no JWT text), and extra fields (the `reason` of a 410).
 */
export class NotifyRefusal extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'NotifyRefusal'
  }

  reply(): CloudReply {
    return { status: this.status, body: { error: this.error, message: this.message, ...this.extra } }
  }
}

/** A 410 with the `reason` the app and the client read (contract §3.4.3, §3.4.6, §3.5.2). */
export function gone(reason: string, message: string): NotifyRefusal {
  return new NotifyRefusal(410, reason, message, { reason })
}
