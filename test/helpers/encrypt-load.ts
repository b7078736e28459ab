import { request } from 'node:https'
import { performance } from 'node:perf_hooks'
import { b64 } from './base64.js'
import { jsonOrUndefined } from './http.js'

/** What one lane encrypts with: a key and a `keymgmt:use:<kid>` token. */
export interface Lane {
  kid: string
  token: string
}

/** One encrypt request as its client saw it; `lane` and `n` name it (its plaintext says the same). */
export interface Outcome {
  lane: number
  n: number
  /** When it was sent, ms since the load started, and how long it took. */
  sent: number
  ms: number
  status?: number
  contentType?: string
  json?: any
  /** Why no answer came: the connection dropped or was refused, or the client gave up waiting. */
  error?: string
}

/**
 * Concurrent encrypt requests over HTTPS: one lane per entry of `lanes`, each sending its next
 * request as soon as the last is answered, each on a fresh connection (so that a dropped
 * connection is one request's). A lane ends at its first request without an answer, or at `stop`.
 */
export class EncryptLoad {
  readonly outcomes: Outcome[] = []
  private readonly started = performance.now()
  private running = true
  private pending = 0
  private readonly done: Promise<void>

  constructor(
    private readonly https: string,
    lanes: Lane[],
    /** A request unanswered this long is given up (the error `timeout`): a hang is a result, not a stuck test. */
    private readonly timeoutMs: number,
  ) {
    this.done = Promise.all(lanes.map((lane, i) => this.run(i, lane))).then(() => undefined)
  }

  /** ms since the load started, on the clock of `sent`. */
  now(): number {
    return performance.now() - this.started
  }

  /** Requests sent and not answered yet. */
  get inFlight(): number {
    return this.pending
  }

  /** The outcomes that match; `since` keeps those sent at or after that time. */
  where(match: (o: Outcome) => boolean, since = 0): Outcome[] {
    return this.outcomes.filter((o) => o.sent >= since && match(o))
  }

  /** Lets every lane finish its request in flight; resolves when all have ended. */
  stop(): Promise<void> {
    this.running = false
    return this.done
  }

  /** Resolves when every lane has ended by itself (at its first request without an answer). */
  ended(): Promise<void> {
    return this.done
  }

  private async run(lane: number, { kid, token }: Lane): Promise<void> {
    for (let n = 0; this.running; n++) {
      const sent = this.now()
      this.pending++
      const answer = await this.encrypt(kid, token, `lane ${lane} request ${n}`)
      this.pending--
      this.outcomes.push({ lane, n, sent, ms: this.now() - sent, ...answer })
      if (answer.error) return
    }
  }

  private encrypt(
    kid: string,
    token: string,
    plaintext: string,
  ): Promise<Pick<Outcome, 'status' | 'contentType' | 'json' | 'error'>> {
    const body = JSON.stringify({ alg: 'AES256-GCM', kid, msg: b64(Buffer.from(plaintext)) })
    return new Promise((resolve) => {
      const req = request(
        `${this.https}/api/crypto/cipher/encrypt`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          rejectUnauthorized: false,
          agent: false,
          signal: AbortSignal.timeout(this.timeoutMs),
        },
        (res) => {
          let text = ''
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
          res.on('error', (err) => resolve({ error: errorName(err) }))
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              contentType: String(res.headers['content-type']),
              json: jsonOrUndefined(text),
            }),
          )
        },
      )
      req.on('error', (err) => resolve({ error: errorName(err) }))
      req.end(body)
    })
  }
}

function errorName(err: Error): string {
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return 'timeout'
  return (err as NodeJS.ErrnoException).code ?? err.message
}
