import { Transform, type TransformCallback } from 'node:stream'
import { PROXY_SIGNATURE } from './proxy-header.js'

/**
 * The most of a request head held back while it is incomplete. A longer one goes on to uWS as it
 * comes, and so does the rest of its connection: uWS judges it as it would without the front.
 */
export const HEAD_LIMIT = 16 * 1024

/** A client sent the bytes uWS reads as a PROXY header: a forged client address, so the connection is dropped. */
export class ForgedProxyHeaderError extends Error {
  override name = 'ForgedProxyHeaderError'

  constructor() {
    super('a client sent a PROXY protocol header of its own')
  }
}

const HEAD_END = Buffer.from('\r\n\r\n')
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
/** Method, target, the spaces after it (raw, as PHP's stream wrapper sends a URL ending in spaces), version. */
const REQUEST_LINE = new RegExp(`^(${TOKEN}) ([^\\x00-\\x20\\x7f]+)( +)HTTP/1\\.1$`)
/** A header field: a token, a colon, and a value with no control character but HTAB. */
const FIELD = new RegExp(`^(${TOKEN}):[ \\t]*([^\\x00-\\x08\\x0a-\\x1f\\x7f]*)$`)

/** A head the front understands: its bytes for uWS, and the length of the body that follows it. */
interface Framed {
  head: Buffer
  body: number
}

/**
 * The client's bytes on their way to uWS through the DIAG front (diag-front.ts). uWS takes a request
 * line with more than one space before `HTTP/1.1` for an unfinished one and leaves it unanswered
 * (crypto-contract §6: the family's scripts send `wipe_config` so): such a line goes on with one.
 *
 * To find each request line it reads the stream as uWS frames it: a head up to its blank line, then
 * `Content-Length` bytes of body. A head it cannot frame with certainty (a `Transfer-Encoding`, two
 * lengths, a length that is no plain number, a malformed line, more than HEAD_LIMIT bytes) goes on
 * unchanged, and so does everything after it on that connection: the front changes no byte it might
 * misjudge. What it never lets through, framed or not, is the PROXY protocol signature: uWS reads a
 * PROXY header at the start of any request, so a client sending one would name its own address.
 */
export class RequestLines extends Transform {
  /** The incomplete head held back. */
  #head: Buffer = Buffer.alloc(0)
  /** Body bytes still to pass before the next head. */
  #body = 0
  /** Past a head the front could not frame: the rest of the connection passes as it comes. */
  #unframed = false
  /** The last bytes seen, for a signature split between two reads. */
  #tail: Buffer = Buffer.alloc(0)

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const edge = Buffer.concat([this.#tail, chunk.subarray(0, PROXY_SIGNATURE.length - 1)])
    if (edge.includes(PROXY_SIGNATURE) || chunk.includes(PROXY_SIGNATURE)) return done(new ForgedProxyHeaderError())
    this.#tail = lastBytes(this.#tail, chunk, PROXY_SIGNATURE.length - 1)
    this.#pass(chunk)
    done()
  }

  override _flush(done: TransformCallback): void {
    // The client stopped in the middle of a head: uWS gets what came, as it would have.
    if (this.#head.length > 0) this.push(this.#head)
    done()
  }

  #pass(chunk: Buffer): void {
    let rest = chunk
    while (rest.length > 0) {
      if (this.#unframed) {
        this.push(rest)
        return
      }
      if (this.#body > 0) {
        const body = rest.subarray(0, this.#body)
        this.push(body)
        this.#body -= body.length
        rest = rest.subarray(body.length)
        continue
      }
      const from = Math.max(0, this.#head.length - (HEAD_END.length - 1))
      const held = this.#head.length > 0 ? Buffer.concat([this.#head, rest]) : rest
      const end = held.indexOf(HEAD_END, from)
      if (end === -1) {
        if (held.length <= HEAD_LIMIT) {
          this.#head = held
          return
        }
        this.#unframed = true
        this.#head = Buffer.alloc(0)
        this.push(held)
        return
      }
      this.#head = Buffer.alloc(0)
      const framed = frame(held.subarray(0, end + HEAD_END.length))
      if (!framed) {
        this.#unframed = true
        this.push(held)
        return
      }
      this.push(framed.head)
      this.#body = framed.body
      rest = held.subarray(end + HEAD_END.length)
    }
  }
}

/** The last `n` bytes of `before` followed by `chunk`, copied (a socket's chunk is not kept for them). */
function lastBytes(before: Buffer, chunk: Buffer, n: number): Buffer {
  return Buffer.from(chunk.length >= n ? chunk.subarray(-n) : Buffer.concat([before, chunk]).subarray(-n))
}

/** The head (ending in its blank line) with one space before `HTTP/1.1`; undefined when it cannot be framed. */
function frame(head: Buffer): Framed | undefined {
  const [requestLine = '', ...fields] = head.subarray(0, -HEAD_END.length).toString('latin1').split('\r\n')
  const line = REQUEST_LINE.exec(requestLine)
  if (!line) return undefined
  let body: number | undefined
  for (const field of fields) {
    const [, name = '', value = ''] = FIELD.exec(field) ?? []
    const lower = name.toLowerCase()
    if (lower === '' || lower === 'transfer-encoding') return undefined
    if (lower !== 'content-length') continue
    if (body !== undefined || !/^\d{1,15}$/.test(value)) return undefined
    body = Number(value)
  }
  if (line[3] === ' ') return { head, body: body ?? 0 }
  const rewritten = [`${line[1]} ${line[2]} HTTP/1.1`, ...fields, '', ''].join('\r\n')
  return { head: Buffer.from(rewritten, 'latin1'), body: body ?? 0 }
}
