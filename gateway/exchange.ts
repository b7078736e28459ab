import { STATUS_CODES } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { Logger } from 'pino'
import type { HttpResponse } from 'uWebSockets.js'
import type { Clock, Timer } from '../hal/index.js'
import { MAX_IMAGE_BYTES } from '../image/index.js'
import type { CommandReply } from '../protocol/index.js'
import { ConnectionReads } from './connection-reads.js'
import { HttpError } from './errors.js'
import { errorReply, JSON_TYPE, replyBody } from './reply-body.js'
import { nextRequestId } from './request-id.js'
import type { Outcome } from './request-metrics.js'

/** Shared, not a buffer per request: nothing is written into it. */
const NOTHING_HELD = Buffer.alloc(0)

/** How much of a refused body is still read and dropped after its early answer, at most, before the close. */
export const LINGER_BYTES = 2 * MAX_IMAGE_BYTES
const LINGER_MS = 5000
/** A client that sends nothing for this long after an early answer waits for the rest of it. */
const QUIET_MS = 500

/**
 * One request/response pair on a uWS response. Writes the answer once, never after the client
 * has gone, and logs it. Header names are written exactly as given here (uWS adds
 * `Content-Length`, `Date` and its own mark).
 */
export class Exchange {
  readonly rid = nextRequestId()
  private readonly started = performance.now()
  private readonly headers = new Map<string, string>()
  /** `lingering`: answered early but for the answer's last byte (see `answerWhileReceiving`). */
  private state: 'open' | 'lingering' | 'aborted' | 'done' = 'open'
  /** The whole request body has arrived. */
  private bodyIn = false
  /** Answered before the body was in: what more comes of it is dropped. */
  private early = false
  private lingered = 0
  /** The early answer, whose last byte is held back. */
  private held = NOTHING_HELD
  /** A body reader took the body (see `body`). */
  private tapped = false
  // The host's timers, not the device's clock: they pace how long a refused client's socket is read out after
  // its answer went out, a detail of the transport that no deadline of the device (dosprot) sets.
  private lingerTimer: NodeJS.Timeout | undefined
  private quietTimer: NodeJS.Timeout | undefined
  readonly reads: ConnectionReads
  /**
   * Where the body readers (body.ts, upload.ts) take the request body from: once an answer went
   * out early, what the client still sends is dropped here instead.
   */
  readonly body: Pick<HttpResponse, 'onData'>
  private deadline: Timer | undefined
  /** Wakes a stream waiting for the socket to drain, also when the client goes away. */
  private drained: (() => void) | undefined
  private readonly abortListeners: (() => void)[] = []

  constructor(
    private readonly res: HttpResponse,
    readonly method: string,
    readonly path: string,
    private readonly logger: Logger,
    /** The device's: the request's deadline runs on it. */
    private readonly clock: Clock,
    /** Told once, as the exchange ends: how (its status, or `aborted`) and how long it took. */
    private readonly onSettled: (outcome: Outcome, seconds: number) => void,
  ) {
    this.reads = new ConnectionReads(res, () => this.state === 'open' || this.state === 'lingering')
    this.body = {
      onData: (handler) => {
        this.tapped = true
        return res.onData((chunk, isLast) => {
          this.bodyIn ||= isLast
          if (!this.early) handler(chunk, isLast)
          else if (this.state === 'lingering') this.linger(chunk.byteLength)
        })
      },
    }
    res.onAborted(() => {
      this.stopLingering()
      // A lingering exchange was settled when its answer went out.
      const settled = this.state === 'lingering'
      this.state = 'aborted'
      this.drained?.()
      for (const listener of this.abortListeners) listener()
      if (!settled) this.settle('aborted')
    })
  }

  /** Whether an answer may still be written (uWS must not be touched after the end or an abort). */
  get open(): boolean {
    return this.state === 'open'
  }

  onAbort(listener: () => void): void {
    this.abortListeners.push(listener)
  }

  setHeader(name: string, value: string): void {
    this.headers.set(name, value)
  }

  /** Adds to a list-valued header (`Vary`), set already or not. */
  appendHeader(name: string, value: string): void {
    const set = this.headers.get(name)
    this.headers.set(name, set === undefined ? value : `${set}, ${value}`)
  }

  /**
   * Answers 408 and closes `ms` of the device's time from now, unless `clearDeadline` or the answer comes first.
   * `expiring` runs just before (an upload stops reading its body).
   */
  setDeadline(ms: number, expiring?: () => void): void {
    this.deadline = this.clock.timer(ms, () => {
      expiring?.()
      this.fail(new HttpError(408, 'request_timeout', 'The request was not received in time'))
    })
  }

  clearDeadline(): void {
    this.deadline?.cancel()
    this.deadline = undefined
  }

  /**
   * Writes the answer. `close` closes the connection after it. `linger`, for an answer to a
   * request whose body is still arriving: it goes out at once, and the rest of the body is read
   * and dropped (up to LINGER_BYTES or LINGER_MS, then the connection is closed): a close under a
   * client still sending resets the connection, and the client can lose the answer unread.
   */
  send(reply: CommandReply, close: boolean | 'linger' = false): void {
    if (this.state !== 'open') return
    // The early answer holds its last byte back: it needs one (a refusal always has its error body).
    const early = reply.body !== undefined && reply.status !== 204 && this.method !== 'HEAD'
    if (close === 'linger' && !this.bodyIn && early) return this.answerWhileReceiving(reply)
    this.reads.release()
    this.state = 'done'
    const { res } = this
    res.cork(() => {
      res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`)
      if (reply.status !== 204 && reply.status !== 304) res.writeHeader('Content-Type', reply.contentType ?? JSON_TYPE)
      this.writeHeaders()
      // A service's refusal for now (a 429 of the login queue) says when to come back.
      if (Number.isSafeInteger(reply.retryAfter) && reply.retryAfter! >= 0)
        res.writeHeader('Retry-After', String(reply.retryAfter))
      // A 204, 304 or HEAD answer carrying a body would put a keep-alive client out of step.
      const bodyless = reply.status === 204 || reply.status === 304 || this.method === 'HEAD'
      if (!bodyless) res.end(replyBody(reply), close !== false)
      else if (close) res.end('', true)
      // Without arguments: this uWS reads any length given here, even undefined, as a body still to come.
      else res.endWithoutBody()
    })
    this.settle(reply.status)
  }

  /**
   * Answers `status` with a body of `total` bytes that arrives in chunks: `first`, then what
   * `next(offset)` gives until `total` bytes are out. Each chunk waits for the socket to drain
   * (uWS backpressure), so memory holds one chunk whatever the size. `Content-Length` is
   * `total`, never chunked encoding. A chunk that cannot be had after the head is out closes
   * the connection: the client sees a short body rather than a wrong one.
   */
  async stream(
    status: number,
    contentType: string,
    total: number,
    first: Uint8Array,
    next: (offset: number) => Promise<Uint8Array>,
  ): Promise<void> {
    if (this.state !== 'open') return
    const { res } = this
    this.reads.release()
    res.cork(() => {
      res.writeStatus(`${status} ${STATUS_CODES[status] ?? ''}`)
      res.writeHeader('Content-Type', contentType)
      this.writeHeaders()
      if (total === 0) res.end()
    })
    let sent = 0
    let chunk = first
    try {
      while (total > 0 && this.state === 'open') {
        if (chunk.length === 0 || sent + chunk.length > total)
          throw new Error(`a chunk at ${sent} does not fit the ${total} bytes announced`)
        await this.writeChunk(chunk, total)
        sent += chunk.length
        if (sent === total || this.state !== 'open') break
        chunk = await next(sent)
      }
    } catch (err) {
      this.logger.warn(
        { rid: this.rid, path: this.path, sent, total, err: (err as Error).message },
        'a streamed answer broke off',
      )
      if (this.state === 'open') res.close()
    }
    if (this.state !== 'open') return
    this.state = 'done'
    this.settle(status)
  }

  /** Hands one chunk to uWS; resolves once all of it is accepted, or the client is gone. */
  private writeChunk(chunk: Uint8Array, total: number): Promise<void> {
    const { res } = this
    return new Promise((resolve) => {
      const base = res.getWriteOffset()
      let accepted = false
      res.cork(() => ([accepted] = res.tryEnd(chunk, total)))
      if (accepted) return resolve()
      this.drained = resolve
      res.onWritable((offset) => {
        const [ok, done] = res.tryEnd(chunk.subarray(offset - base), total)
        if (ok || done) {
          this.drained = undefined
          resolve()
        }
        return ok
      })
    })
  }

  /**
   * Answers with an error body. 408 and 413 may leave part of the request body unread, so the
   * connection cannot carry another request and is closed; so does `close`. A 413 reaches a
   * client still sending its body (see `send`'s `linger`).
   */
  fail(error: HttpError, close: boolean | 'linger' = error.status === 413 ? 'linger' : error.status === 408): void {
    this.send(errorReply(error), close)
  }

  /**
   * The answer at once, but for its last byte: the response stays open (uWS forbids touching one
   * it ended, and API answers are never chunked), so that the connection can still be closed.
   * The last byte goes out once the rest of the body is in, read and dropped; past LINGER_BYTES
   * or LINGER_MS the connection is closed without it, long after the client had the status.
   */
  private answerWhileReceiving(reply: CommandReply): void {
    this.state = 'lingering'
    this.early = true
    const { res } = this
    // Refused before any reader took the body (inside the request handler, as uWS wants): count it here.
    if (!this.tapped) this.body.onData(() => undefined)
    const body = Buffer.from(replyBody(reply))
    this.held = body
    res.cork(() => {
      res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`)
      res.writeHeader('Content-Type', reply.contentType ?? JSON_TYPE)
      // Where the body ends may never be known (it was cut short, or has no end): no next request here.
      res.writeHeader('Connection', 'close')
      this.writeHeaders()
      res.tryEnd(body.subarray(0, body.length - 1), body.length)
    })
    // A paused upload must go on being read, to be dropped.
    this.reads.release()
    this.lingerTimer = setTimeout(() => this.endLinger(false), LINGER_MS)
    this.quietTimer = setTimeout(() => this.endLinger(true), QUIET_MS)
    this.settle(reply.status)
  }

  private linger(bytes: number): void {
    this.lingered += bytes
    this.quietTimer?.refresh()
    if (this.bodyIn || this.lingered > LINGER_BYTES) this.endLinger(this.bodyIn)
  }

  /**
   * `complete`: the body is in, or the client stopped sending to wait for the answer; the last
   * byte goes out and uWS keeps reading the connection (dropping what is left of the body, and
   * closing it when idle). Else the client sends too much or too long: the connection is closed.
   */
  private endLinger(complete: boolean): void {
    if (this.state !== 'lingering') return
    this.stopLingering()
    this.state = 'done'
    const { res } = this
    if (complete) res.cork(() => res.tryEnd(this.held.subarray(-1), this.held.length))
    else res.close()
  }

  private stopLingering(): void {
    clearTimeout(this.lingerTimer)
    clearTimeout(this.quietTimer)
  }

  /** `X-Request-Id` is the `rid` the journal records of this request carry: a client can cite it to an auditor. */
  private writeHeaders(): void {
    this.res.writeHeader('X-Request-Id', this.rid)
    for (const [name, value] of this.headers) this.res.writeHeader(name, value)
  }

  private settle(status: Outcome): void {
    this.clearDeadline()
    const elapsed = performance.now() - this.started
    if (this.logger.isLevelEnabled('debug')) {
      const ms = Math.round(elapsed * 10) / 10
      this.logger.debug({ rid: this.rid, method: this.method, path: this.path, status, ms }, 'http')
    }
    this.onSettled(status, elapsed / 1000)
  }
}
