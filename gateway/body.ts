import type { TSchema } from '@sinclair/typebox'
import type { TypeCheck } from '@sinclair/typebox/compiler'
import type { HttpResponse } from 'uWebSockets.js'
import { MAX_IMAGE_BYTES } from '../image/index.js'
import { HttpError } from './errors.js'

/** A GET's body: shared, since no reader writes into a body. */
const NO_BODY = Buffer.alloc(0)

/** The largest request body the API accepts (contract §1). */
export const BODY_LIMIT = 7300

/**
 * Whether a body the device answers before reading it is read and dropped first: closing the
 * connection on a client still sending resets it, and the answer is lost to EPIPE or ECONNRESET.
 * Only a length given up front, and no longer than an image, is worth the wait.
 */
export function drainable(contentLength: string, transferEncoding: string): boolean {
  const length = declaredLength(contentLength)
  return transferEncoding === '' && length !== undefined && length <= MAX_IMAGE_BYTES
}

/** A `Content-Length` value; undefined when it is not a plain decimal number. */
export function declaredLength(contentLength: string): number | undefined {
  return /^\d{1,15}$/.test(contentLength) ? Number(contentLength) : undefined
}

/**
 * Reads a body and drops it; resolves once it is all in. Must be called synchronously inside the uWS request handler.
 */
export function dropBody(res: Pick<HttpResponse, 'onData'>): Promise<void> {
  return new Promise((resolve) => res.onData((_chunk, isLast) => isLast && resolve()))
}

export function payloadTooLarge(): HttpError {
  return new HttpError(413, 'payload_too_large', `The request body exceeds ${BODY_LIMIT} bytes`)
}

/**
 * Collects a request body of at most `limit` bytes. Rejects with 413 as soon as more arrives and
 * ignores the rest. Must be called synchronously inside the uWS request handler.
 */
export function readBody(res: Pick<HttpResponse, 'onData'>, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    res.onData((chunk, isLast) => {
      if (size > limit) return
      size += chunk.byteLength
      if (size > limit) return reject(payloadTooLarge())
      // uWS neuters the chunk when this callback returns, so keep a copy (of a GET's empty one, none).
      if (chunk.byteLength > 0) chunks.push(Buffer.from(chunk.slice(0)))
      if (!isLast) return
      // Most bodies come in one chunk: it is the body, not copied again.
      resolve(chunks.length === 1 ? chunks[0]! : size === 0 ? NO_BODY : Buffer.concat(chunks, size))
    })
  })
}

/** A UTF-16 surrogate without its pair: JSON allows it as `\ud800`, UTF-8 (and so the bus) cannot carry it. */
const LONE_SURROGATE = /\p{Cs}/u

/**
 * How deep a body's arrays and objects may nest. No request of the API nests more than two
 * levels, while the bus's encoder recurses once per level and overflows the stack at about 1500
 * levels, which 7300 bytes of `[` reach easily (a 500 for a client's mistake).
 */
const MAX_NESTING = 32

/** Parses a JSON body, which must be an object. */
export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  const text = raw.toString('utf8')
  if (nestsDeeper(text, MAX_NESTING))
    throw new HttpError(400, 'too_deep', `The request body nests deeper than ${MAX_NESTING} levels`)
  let value: unknown
  let unpaired = false
  try {
    value = JSON.parse(text, (key, v: unknown) => {
      if (LONE_SURROGATE.test(key) || (typeof v === 'string' && LONE_SURROGATE.test(v))) unpaired = true
      return v
    })
  } catch {
    throw new HttpError(400, 'malformed_json', 'The request body is not valid JSON')
  }
  // Refused rather than passed on: the bus would turn it into U+FFFD, storing text the client never sent.
  if (unpaired)
    throw new HttpError(400, 'malformed_json', 'The request body holds a string with an unpaired surrogate escape')
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(400, 'body_not_object', 'The request body must be a JSON object')
  }
  return value as Record<string, unknown>
}

/** Whether JSON text nests arrays and objects deeper than `max`; brackets inside strings do not count. */
function nestsDeeper(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // a backslash: the next character is escaped
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

/** The body as a JSON object, or undefined when it is not one (the actor behind the route answers that). */
export function tryParseJsonObject(raw: Buffer): Record<string, unknown> | undefined {
  try {
    return parseJsonObject(raw)
  } catch {
    return undefined
  }
}

/** The body without its top-level null fields. */
export function withoutNulls(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null))
}

export function validateBody(body: Record<string, unknown>, check: TypeCheck<TSchema>): void {
  const error = check.Errors(body).First()
  if (error) throw new HttpError(400, 'invalid_body', `${error.path || 'body'}: ${error.message}`)
}
