import { randomBytes } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { Logger } from 'pino'
import type { HttpResponse } from 'uWebSockets.js'
import type { CommandReply } from '../protocol/index.js'
import { HttpError } from './errors.js'

const JSON_TYPE = 'application/json'

/** Request ids: unique per gateway incarnation without a random draw per request (about 3% of an encrypt). */
const ridPrefix = randomBytes(4).toString('hex')
let ridCounter = 0

/**
 * One request/response pair on a uWS response. Writes the answer once, never after the client
 * has gone, and logs it. Header names are written exactly as given here (uWS adds
 * `Content-Length`, `Date` and its own mark).
 */
export class Exchange {
  readonly rid = ridPrefix + (ridCounter++ >>> 0).toString(16).padStart(8, '0')
  private readonly started = performance.now()
  private readonly headers = new Map<string, string>()
  private state: 'open' | 'aborted' | 'done' = 'open'
  private deadline: NodeJS.Timeout | undefined
  /** Wakes a stream waiting for the socket to drain, also when the client goes away. */
  private drained: (() => void) | undefined
  private readonly abortListeners: (() => void)[] = []

  constructor(
    private readonly res: HttpResponse,
    readonly method: string,
    readonly path: string,
    private readonly logger: Logger,
    private readonly onSettled: () => void,
  ) {
    res.onAborted(() => {
      this.state = 'aborted'
      this.drained?.()
      for (const listener of this.abortListeners) listener()
      this.settle('aborted')
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

  /** Answers 408 and closes unless `clearDeadline` comes first. */
  setDeadline(ms: number): void {
    this.deadline = setTimeout(
      () => this.fail(new HttpError(408, 'request_timeout', 'The request was not received in time')),
      ms,
    )
  }

  clearDeadline(): void {
    clearTimeout(this.deadline)
  }

  send(reply: CommandReply, close = false): void {
    if (this.state !== 'open') return
    this.state = 'done'
    const { res } = this
    res.cork(() => {
      res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`)
      if (reply.status !== 204) res.writeHeader('Content-Type', reply.contentType ?? JSON_TYPE)
      this.writeHeaders()
      // A 204 or HEAD answer carrying a body would put a keep-alive client out of step.
      const bodyless = reply.status === 204 || this.method === 'HEAD'
      if (!bodyless) res.end(encode(reply), close)
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
   * connection cannot carry another request and is closed; so does `close`.
   */
  fail(error: HttpError, close = error.status === 408 || error.status === 413): void {
    this.send(errorReply(error), close)
  }

  /** `X-Request-Id` is the `rid` the journal records of this request carry: a client can cite it to an auditor. */
  private writeHeaders(): void {
    this.res.writeHeader('X-Request-Id', this.rid)
    for (const [name, value] of this.headers) this.res.writeHeader(name, value)
  }

  private settle(status: number | 'aborted'): void {
    this.clearDeadline()
    const ms = Math.round((performance.now() - this.started) * 10) / 10
    this.logger.debug({ rid: this.rid, method: this.method, path: this.path, status, ms }, 'http')
    this.onSettled()
  }
}

/** The API's error body: `{"error": "<snake_case_code>", "message": "<human text>"}`. */
export function errorReply(error: HttpError): CommandReply {
  return { status: error.status, body: { error: error.code, message: error.message } }
}

function encode(reply: CommandReply): string | Uint8Array {
  const { body, contentType = JSON_TYPE } = reply
  if (body === undefined) return ''
  if (contentType !== JSON_TYPE && (typeof body === 'string' || body instanceof Uint8Array)) return body
  return JSON.stringify(body)
}
