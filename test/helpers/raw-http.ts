import { readFile } from 'node:fs/promises'
import net from 'node:net'
import tls from 'node:tls'
import { clientContext } from './tls-client.js'

/** A device listener: its port, and whether it speaks TLS. */
export interface Target {
  port: number
  tls: boolean
}

/** One final answer as it came off the wire. */
export interface RawResponse {
  status: number
  statusLine: string
  /** Header names exactly as sent. */
  headers: [string, string][]
  body: Buffer
  /** False when the head had no Content-Length, so where the body ends is unknown. */
  framed: boolean
}

export interface RawOutcome {
  /** Final answers in order; interim `100 Continue` answers are counted in `continues`. */
  responses: RawResponse[]
  continues: number
  /** The server closed the connection. */
  closed: boolean
  /** Nothing more came within the time limit. */
  timedOut: boolean
  /** The socket error that ended the connection (ECONNRESET, EPIPE), if one did. */
  error?: string
  /** A write failed: the server had closed while the client was still sending. */
  writeFailed: boolean
  /** Bytes after the last whole answer that do not make one. */
  rest: Buffer
}

/**
 * What to write: bytes; a wait for an interim `100 Continue` (or any answer); a wait for this
 * many final answers in all (a request written before the previous answer is out is pipelined,
 * and uWS closes such a connection while an answer is pending); a wait until the device has read
 * every byte written so far; or a pause.
 */
export type Step = Buffer | { continue: true } | { responses: number } | { read: true } | { pause: number }

export interface RawPlan {
  steps: Step[]
  /** After the steps: keep the connection open (default), half-close it, or drop it at once. */
  after?: 'wait' | 'end' | 'destroy'
  /** Stop once this many final answers arrived (default 1). */
  responses?: number
  /** Per answer, whether it answers a HEAD (no body follows its head). */
  head?: boolean[]
  timeoutMs?: number
}

/**
 * One connection driven byte by byte, for what node's HTTP client refuses to send (bad
 * framing, lying Content-Length, raw bytes in the path, half-sent bodies) and to see answers
 * exactly as written (header case, framing, interim answers).
 */
export function rawExchange(target: Target, plan: RawPlan): Promise<RawOutcome> {
  const wanted = plan.responses ?? 1
  const timeoutMs = plan.timeoutMs ?? 10_000
  return new Promise((resolve, reject) => {
    const outcome: RawOutcome = {
      responses: [],
      continues: 0,
      closed: false,
      timedOut: false,
      writeFailed: false,
      rest: Buffer.alloc(0),
    }
    let data: Buffer = Buffer.alloc(0)
    let wake: (() => void) | undefined
    let done = false
    const socket: net.Socket = target.tls
      ? tls.connect(
          { host: '127.0.0.1', port: target.port, rejectUnauthorized: false, secureContext: clientContext() },
          () => void run(),
        )
      : net.connect(target.port, '127.0.0.1', () => void run())
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      outcome.rest = data
      socket.destroy()
      resolve(outcome)
    }
    const timer = setTimeout(() => {
      outcome.timedOut = true
      finish()
    }, timeoutMs)
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk])
      data = parse(data, outcome, plan.head ?? [])
      wake?.()
      if (outcome.responses.length >= wanted) finish()
    })
    socket.on('close', () => {
      outcome.closed = true
      wake?.()
      finish()
    })
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A refused or reset connection before anything was written is the device being down.
      if (!socket.bytesWritten && !done) {
        done = true
        clearTimeout(timer)
        reject(err)
      }
      outcome.error = err.code ?? err.message
    })
    const answered = (step: { continue: true } | { responses: number }) =>
      outcome.closed ||
      ('continue' in step
        ? outcome.continues > 0 || outcome.responses.length > 0
        : outcome.responses.length >= step.responses)
    let written = Promise.resolve()
    async function run() {
      for (const step of plan.steps) {
        if (done) return
        if (Buffer.isBuffer(step))
          written = new Promise((r) =>
            socket.write(step, (err) => {
              if (err) outcome.writeFailed = true
              r()
            }),
          )
        else if ('read' in step) {
          await written
          await untilRead(socket, target.port, () => done)
        } else if ('pause' in step) await new Promise((r) => setTimeout(r, step.pause))
        else while (!answered(step) && !done) await new Promise<void>((r) => (wake = r))
      }
      if (plan.after === 'end') socket.end()
      if (plan.after === 'destroy') finish()
    }
  })
}

/**
 * Waits until the kernel holds none of this connection's bytes in either direction's queue: the
 * device's process has read them (and uWS parses what it reads at once). A pause instead would
 * only guess how long a loaded host takes to read.
 */
async function untilRead(socket: net.Socket, serverPort: number, stopped: () => boolean): Promise<void> {
  const address = (port: number) => `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`
  const client = address(socket.localPort!)
  const server = address(serverPort)
  while (!stopped()) {
    const queued = (await readFile('/proc/net/tcp', 'latin1'))
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter(([, local, remote]) => (local === client && remote === server) || (local === server && remote === client))
      .some(([, , , , queues]) => queues !== '00000000:00000000')
    if (!queued) return
    await new Promise((r) => setTimeout(r, 2))
  }
}

/** Takes every whole answer off the front of `data`; returns what is left. */
function parse(data: Buffer, outcome: RawOutcome, head: boolean[]): Buffer {
  for (;;) {
    const end = data.indexOf('\r\n\r\n')
    if (end === -1) return data
    const lines = data.subarray(0, end).toString('latin1').split('\r\n')
    const statusLine = lines[0]!
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0)
    const headers = lines.slice(1).map((line): [string, string] => {
      const colon = line.indexOf(':')
      return colon === -1 ? [line, ''] : [line.slice(0, colon), line.slice(colon + 1).trim()]
    })
    if (status >= 100 && status < 200) {
      outcome.continues++
      data = data.subarray(end + 4)
      continue
    }
    const lengthHeader = headers.find(([name]) => name.toLowerCase() === 'content-length')?.[1]
    const bodyless = head[outcome.responses.length] === true || status === 204 || status === 304
    const length = bodyless ? 0 : lengthHeader === undefined ? undefined : Number(lengthHeader)
    if (length !== undefined && data.length < end + 4 + length) return data
    const body = length === undefined ? data.subarray(end + 4) : data.subarray(end + 4, end + 4 + length)
    outcome.responses.push({ status, statusLine, headers, body: Buffer.from(body), framed: length !== undefined })
    data = data.subarray(end + 4 + body.length)
  }
}

export function header(response: RawResponse, name: string): string | undefined {
  return response.headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1]
}

/**
 * What is wrong with an answer by the contract's rules (§1): no 5xx for anything a client
 * sends, a status line, `Content-Type`/`Content-Length` written exactly so, never chunked, and
 * an error as a JSON `{error, message}`. `head`: the request was a HEAD (no body to check).
 */
export function answerProblems(response: RawResponse, head = false): string[] {
  const problems: string[] = []
  const text = response.body.toString('utf8')
  if (!/^HTTP\/1\.1 [1-5]\d\d /.test(response.statusLine))
    problems.push(`malformed status line ${JSON.stringify(response.statusLine)}`)
  if (response.status >= 500) problems.push(`answered ${response.status}: ${text.slice(0, 200)}`)
  for (const [name] of response.headers) {
    if (!/^[A-Za-z0-9-]+$/.test(name)) problems.push(`malformed header line ${JSON.stringify(name)}`)
    const lower = name.toLowerCase()
    if (lower === 'content-type' && name !== 'Content-Type') problems.push(`header written as ${name}`)
    if (lower === 'content-length' && name !== 'Content-Length') problems.push(`header written as ${name}`)
    if (lower === 'transfer-encoding') problems.push('a chunked answer')
  }
  if (head || response.status === 204) return problems
  if (!response.framed) problems.push('no Content-Length')
  const type = header(response, 'content-type')
  if (type === undefined) problems.push('no Content-Type')
  if (response.status >= 400) {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    const error = json as { error?: unknown; message?: unknown } | undefined
    if (type !== 'application/json' || typeof error?.error !== 'string' || typeof error.message !== 'string') {
      problems.push(`error ${response.status} without a JSON {error, message} body: ${type} ${text.slice(0, 200)}`)
    }
  } else if (type === 'application/json' && text !== '') {
    try {
      JSON.parse(text)
    } catch {
      problems.push(`a JSON answer that does not parse: ${text.slice(0, 200)}`)
    }
  }
  return problems
}

/** The head of a request, `Host` first unless `headers` names its own; text is written as UTF-8. */
export function requestHead(method: string, path: string | Buffer, headers: [string, string][]): Buffer {
  const hasHost = headers.some(([name]) => name.toLowerCase() === 'host')
  const lines = [...(hasHost ? [] : [['Host', '127.0.0.1'] as [string, string]]), ...headers].map(
    ([n, v]) => `${n}: ${v}\r\n`,
  )
  return Buffer.concat([
    Buffer.from(`${method} `),
    Buffer.isBuffer(path) ? path : Buffer.from(path),
    Buffer.from(` HTTP/1.1\r\n${lines.join('')}\r\n`),
  ])
}
