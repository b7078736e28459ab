import { createInbox, PermissionViolationError, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { type BatchReplyPart, decode, packArray, withinBatchLimits } from '../protocol/index.js'
import { BusTimeoutError, BusUnavailableError } from './errors.js'
import { processMetrics } from '../metrics/index.js'

/** One request, from its caller's call until its reply, its timeout or its failure. */
interface Call {
  readonly subject: string
  readonly data: Uint8Array
  resolve(reply: unknown): void
  reject(error: Error): void
  readonly timer: NodeJS.Timeout
  /** Its caller has been answered. */
  done: boolean
  /** Where its reply will come: the message it was sent in, and its index in that message's envelope. */
  message?: Message
  index?: number
}

/** One message on the bus: a lone command, or an envelope of several for the same subject. */
interface Message {
  readonly token: string
  /** Its calls by index in the envelope (an envelope holds more than one), each undefined once answered. */
  readonly calls: (Call | undefined)[]
  open: number
}

/**
 * Request/reply over one wildcard reply subscription, in batches. The requests of one event-loop
 * turn to the same subject go out as one message, an envelope (protocol/command-batch.ts) the
 * service answers with one message, or a few when some of its commands take longer: a NATS message
 * costs every process on its way far more than the request it carries. Nothing waits for company:
 * the turn's requests go out at its end, as a lone one does. A request's timeout, failure or reply
 * is its own, whatever the others of its envelope do.
 * nats.js's own `request` allocates two Error objects per request even when the reply arrives;
 * this does the same exchange without them. No-responder replies fail at once, like nats.js's.
 */
export class RequestMux {
  private readonly prefix: string
  private readonly messages = new Map<string, Message>()
  private next = 0
  /** This turn's requests by subject, in the order they were made. */
  private outbox = new Map<string, Call[]>()
  private readonly sent = processMetrics()?.busEnvelopesSent

  constructor(
    private readonly nc: NatsConnection,
    inboxPrefix: string,
  ) {
    this.prefix = createInbox(inboxPrefix)
    nc.subscribe(`${this.prefix}.*`, { callback: (err, msg) => this.settle(err, msg) })
    void nc.closed().then(() => this.failAll('the connection is closed'))
    void this.followConnection()
  }

  /**
   * The decoded reply. BusTimeoutError when a responder took the request but no reply came within
   * `timeoutMs`, or the connection was lost once it was sent; BusUnavailableError on no responder
   * (its `noResponder` set), an undecodable reply, or a connection lost or closed before it was sent.
   */
  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const call: Call = {
        subject,
        data,
        resolve,
        reject,
        done: false,
        timer: setTimeout(() => {
          this.finish(call)
          reject(new BusTimeoutError(`${subject}: no reply within ${timeoutMs} ms`))
        }, timeoutMs),
      }
      if (this.outbox.size === 0) setImmediate(() => this.send())
      const queued = this.outbox.get(subject)
      if (queued) queued.push(call)
      else this.outbox.set(subject, [call])
    })
  }

  /**
   * Publishes the turn's requests, an envelope per subject (within BATCH_LIMITS): nats.js writes
   * what is published in one go with one socket write.
   */
  private send(): void {
    const outbox = this.outbox
    this.outbox = new Map()
    for (const [subject, queued] of outbox) {
      // Failed before its turn (a timeout, a lost connection): its caller was told, and it must not run.
      const waiting = queued.filter((call) => !call.done)
      for (const calls of withinBatchLimits(waiting, (call) => call.data.length)) this.publish(subject, calls)
    }
  }

  private publish(subject: string, calls: Call[]): void {
    const message: Message = { token: (this.next++).toString(36), calls, open: calls.length }
    const data = calls.length > 1 ? packArray(calls.map((call) => call.data)) : calls[0]!.data
    calls.forEach((call, index) => Object.assign(call, { message, index }))
    this.messages.set(message.token, message)
    try {
      this.nc.publish(subject, data, { reply: `${this.prefix}.${message.token}` })
      this.sent?.inc()
    } catch (err) {
      return this.failMessage(message, (call) => new BusUnavailableError(`${call.subject}: ${(err as Error).message}`))
    }
  }

  /**
   * Fails every request still waiting for its reply, as when the connection drops: a request or
   * its reply in flight then may be lost with the connection, and a caller must not wait out the
   * timeout to learn that. One already sent may have reached its service and run, or still run:
   * it fails as a timeout, which says so, where "unavailable" (a 503) would invite a retry that
   * runs it twice. One not sent yet fails as unavailable, and never will be.
   */
  failAll(reason: string, cause?: Error): void {
    const queued = [...this.outbox.values()].flat()
    this.outbox = new Map()
    this.answer(queued, (call) => call.reject(new BusUnavailableError(`${call.subject}: ${reason}`, { cause })))
    // A message is published as soon as it is made (or failed at once): every call of one was sent.
    for (const message of [...this.messages.values()]) {
      this.failMessage(
        message,
        (call) => new BusTimeoutError(`${call.subject}: ${reason} after it was sent; it may still complete`, { cause }),
      )
    }
  }

  /**
   * A dropped connection fails what waits (see failAll). A publish the server refuses (this
   * connection's user may not send to that subject) is only reported on the connection, never to
   * the request: without this it would wait out its deadline and pass for a slow service. No
   * service can be reached there, so: unavailable.
   */
  private async followConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') this.failAll('the bus connection dropped')
      if (status.type !== 'error' || !(status.error instanceof PermissionViolationError)) continue
      const { operation, subject } = status.error
      if (operation !== 'publish') continue
      for (const message of [...this.messages.values()]) {
        if (message.calls.some((call) => call?.subject === subject))
          this.failMessage(
            message,
            () => new BusUnavailableError(`${subject}: refused by the bus`, { cause: status.error }),
          )
      }
    }
  }

  /** Takes `call` out of its message, and the message out of the map once none of its calls waits. */
  private finish(call: Call): void {
    call.done = true
    clearTimeout(call.timer)
    const { message, index } = call
    if (!message || index === undefined || message.calls[index] !== call) return
    message.calls[index] = undefined
    message.open -= 1
    if (message.open === 0) this.messages.delete(message.token)
  }

  private failMessage(message: Message, error: (call: Call) => Error): void {
    this.answer(message.calls, (call) => call.reject(error(call)))
  }

  /** Answers each of `calls` still waiting (a timed-out one was answered, a settled one left its message). */
  private answer(calls: readonly (Call | undefined)[], how: (call: Call) => void): void {
    for (const call of calls) {
      if (!call || call.done) continue
      this.finish(call)
      how(call)
    }
  }

  private settle(err: Error | null, msg: Msg): void {
    if (err) return this.failAll(`the reply subscription ended: ${err.message}`, err)
    const message = this.messages.get(msg.subject.slice(this.prefix.length + 1))
    if (!message) return
    if (msg.data.length === 0 && msg.headers?.code === 503)
      return this.failMessage(
        message,
        (call) => new BusUnavailableError(`${call.subject}: no responder`, { noResponder: true }),
      )
    let reply: unknown
    try {
      reply = decode(msg.data)
    } catch (cause) {
      return this.failMessage(
        message,
        (call) => new BusUnavailableError(`${call.subject}: undecodable reply`, { cause }),
      )
    }
    // A refusal of the whole envelope (one too big, say) is every command's answer.
    if (message.calls.length === 1 || !Array.isArray(reply))
      return this.answer(message.calls, (call) => call.resolve(reply))
    for (const entry of reply as BatchReplyPart) {
      const call = Array.isArray(entry) && Number.isInteger(entry[0]) ? message.calls[entry[0]] : undefined
      if (!call) continue
      this.finish(call)
      call.resolve(entry[1])
    }
  }
}
