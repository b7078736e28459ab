import { createInbox, PermissionViolationError, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { BusTimeoutError, BusUnavailableError } from './errors.js'

interface Pending {
  subject: string
  resolve(data: Uint8Array): void
  reject(error: Error): void
  timer: NodeJS.Timeout
  /** Handed to the connection: from then on its service may run it, whatever becomes of the reply. */
  sent: boolean
}

/**
 * Request/reply over one wildcard reply subscription. nats.js's own `request` allocates two
 * Error objects per request even when the reply arrives (one to cancel the settled promise),
 * about 5% of the gateway's CPU on an encrypt; this does the same exchange without them.
 * No-responder replies (a 503 status without payload) fail at once, like nats.js's.
 */
export class RequestMux {
  private readonly prefix: string
  private readonly pending = new Map<string, Pending>()
  private next = 0
  private outbox: { subject: string; data: Uint8Array; token: string }[] = []

  constructor(
    private readonly nc: NatsConnection,
    inboxPrefix: string,
  ) {
    this.prefix = createInbox(inboxPrefix)
    nc.subscribe(`${this.prefix}.*`, { callback: (err, msg) => this.settle(err, msg) })
    void nc.closed().then(() => this.failAll('the connection is closed'))
    void this.followRefusals()
  }

  /**
   * The reply's payload. BusTimeoutError when a responder took the request but no reply came
   * within `timeoutMs`, or the connection was lost once it was sent; BusUnavailableError on no
   * responder, or a connection lost or closed before it was sent.
   */
  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
    const token = (this.next++).toString(36)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(token)
        reject(new BusTimeoutError(`${subject}: no reply within ${timeoutMs} ms`))
      }, timeoutMs)
      this.pending.set(token, { subject, resolve, reject, timer, sent: false })
      this.outbox.push({ subject, data, token })
      if (this.outbox.length === 1) setImmediate(() => this.send())
    })
  }

  /**
   * Publishes the requests of one event-loop turn together: nats.js writes what is published in
   * one go with one socket write, where one write per request (each HTTP request arrives in its
   * own callback) was a fifth of the gateway's CPU under load.
   */
  private send(): void {
    const batch = this.outbox
    this.outbox = []
    for (const { subject, data, token } of batch) {
      const pending = this.pending.get(token)
      // Failed before its turn (a lost connection): its caller was told it never ran, so it must not.
      if (!pending) continue
      try {
        this.nc.publish(subject, data, { reply: `${this.prefix}.${token}` })
        pending.sent = true
      } catch (err) {
        this.drop(token)?.reject(new BusUnavailableError(`${subject}: ${(err as Error).message}`, { cause: err }))
      }
    }
  }

  /**
   * Fails every request still waiting for its reply. The owner calls it when the connection
   * drops: a request or its reply in flight then may be lost with the connection, and a caller
   * must not wait out the timeout to learn that. One already sent may have reached its service
   * and run, or still run: it fails as a timeout, which says so, where "unavailable" (a 503)
   * would invite a retry that runs it twice. One not sent yet fails as unavailable, and never will be.
   */
  failAll(reason: string, cause?: Error): void {
    for (const [token, { subject, sent }] of [...this.pending]) {
      const error = sent
        ? new BusTimeoutError(`${subject}: ${reason} after it was sent; it may still complete`, { cause })
        : new BusUnavailableError(`${subject}: ${reason}`, { cause })
      this.drop(token)?.reject(error)
    }
  }

  /**
   * A publish the server refuses (this connection's user may not send to that subject) is only
   * reported on the connection, never to the request: without this it would wait out its
   * deadline and pass for a slow service. No service can be reached there, so: unavailable.
   */
  private async followRefusals(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type !== 'error' || !(status.error instanceof PermissionViolationError)) continue
      const { operation, subject } = status.error
      if (operation !== 'publish') continue
      for (const [token, pending] of [...this.pending]) {
        if (pending.subject === subject)
          this.drop(token)?.reject(new BusUnavailableError(`${subject}: refused by the bus`, { cause: status.error }))
      }
    }
  }

  private drop(token: string): Pending | undefined {
    const pending = this.pending.get(token)
    if (!pending) return undefined
    this.pending.delete(token)
    clearTimeout(pending.timer)
    return pending
  }

  private settle(err: Error | null, msg: Msg): void {
    if (err) return this.failAll(`the reply subscription ended: ${err.message}`, err)
    const pending = this.drop(msg.subject.slice(this.prefix.length + 1))
    if (!pending) return
    if (msg.data.length === 0 && msg.headers?.code === 503)
      pending.reject(new BusUnavailableError(`${pending.subject}: no responder`))
    else pending.resolve(msg.data)
  }
}
