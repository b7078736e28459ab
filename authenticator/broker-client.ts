import { BrokerAnswerError, answerKind } from './broker-answer-error.js'

export interface HttpAnswer {
  status: number
  /** The parsed JSON body; undefined when there was none or it did not parse. */
  body: unknown
}

/** One HTTP exchange with JSON in and out: `fetch` in a browser, node's https (with a CA) in the CLI. */
export type HttpTransport = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => Promise<HttpAnswer>

/** A transport over a WHATWG `fetch` (a browser's, or node's). */
export function fetchTransport(fetcher: typeof fetch = fetch): HttpTransport {
  return async (method, url, body) => {
    const init: RequestInit =
      body === undefined
        ? { method }
        : { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }
    const response = await fetcher(url, init)
    const text = await response.text()
    return { status: response.status, body: parseJson(text) }
  }
}

export function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown)
  } catch {
    return undefined
  }
}

/** Waits between retries of a broker that answered ≥ 500 or not at all. */
export interface RetryPolicy {
  sleep(ms: number): Promise<void>
  /** Delays before each retry; their count is the number of retries (default 0.5 s, 1 s, 2 s, 4 s). */
  delays?: readonly number[]
}

const DEFAULT_DELAYS = [500, 1000, 2000, 4000]

/** The broker's routes the authenticator calls, each answer mapped (§4.2); ≥ 500 and no answer retried with backoff. */
export class BrokerClient {
  constructor(
    private readonly transport: HttpTransport,
    private readonly retry: RetryPolicy,
  ) {}

  /** The answer's body when its status is one of `ok` (default 200); a BrokerAnswerError otherwise. */
  async call(
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    what: string,
    body?: unknown,
    ok: readonly number[] = [200],
  ): Promise<unknown> {
    const delays = this.retry.delays ?? DEFAULT_DELAYS
    for (let attempt = 0; ; attempt++) {
      let answer: HttpAnswer | undefined
      let failure: unknown
      try {
        answer = await this.transport(method, url, body)
      } catch (err) {
        failure = err
      }
      if (answer && ok.includes(answer.status)) return answer.body
      const kind = answer ? answerKind(answer.status) : 'unavailable'
      const delay = delays[attempt]
      if (kind !== 'unavailable' || delay === undefined)
        throw new BrokerAnswerError(kind, answer?.status, what, failure === undefined ? undefined : { cause: failure })
      await this.retry.sleep(delay)
    }
  }
}
