// An upload as the fuzzers put it on the wire: its body framed by an honest or lying Content-Length (missing,
// chunked, not a number, longer than the body and then a half-close or a drop, shorter than the body), with or
// without Expect: 100-continue, written at once or in pieces; and what its outcome must be.
import fc from 'fast-check'
import { outcomeProblems } from './fuzz-device.js'
import { answerProblems, requestHead, type RawOutcome, type RawPlan, type Step } from './raw-http.js'

/** How long the body is said to be, against what is sent. */
export type Length =
  | { kind: 'exact' }
  | { kind: 'missing' }
  | { kind: 'chunked' }
  | { kind: 'text'; text: string }
  | { kind: 'more'; by: number; then: 'end' | 'destroy' }
  | { kind: 'less'; by: number }

export interface Framing {
  length: Length
  /** Send `Expect: 100-continue`; `wait`: and hold the body until the interim answer. */
  expect: 'no' | 'send' | 'wait'
  /** Written at once, or in this many pieces with a pause after each. */
  pieces: number
}

/** Content-Length texts a device must refuse or read as a number: `maxText` the first above the route's limit. */
export const lengthPlan = (maxText: string): fc.Arbitrary<Length> =>
  fc.oneof(
    { arbitrary: fc.constant({ kind: 'exact' as const }), weight: 6 },
    { arbitrary: fc.constantFrom({ kind: 'missing' as const }, { kind: 'chunked' as const }), weight: 1 },
    {
      arbitrary: fc.record({
        kind: fc.constant('text' as const),
        text: fc.constantFrom('0', maxText, '99999999999', '1e3', '-1', '0x10', ' 5', 'abc', ''),
      }),
      weight: 1,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('more' as const),
        by: fc.integer({ min: 1, max: 1_000_000 }),
        then: fc.constantFrom('end' as const, 'destroy' as const),
      }),
      weight: 2,
    },
    { arbitrary: fc.record({ kind: fc.constant('less' as const), by: fc.integer({ min: 1, max: 10 }) }), weight: 1 },
  )

export const expectPlan = fc.constantFrom('no' as const, 'send' as const, 'wait' as const)

export const piecesPlan = fc.oneof(
  { arbitrary: fc.constant(1), weight: 3 },
  { arbitrary: fc.integer({ min: 2, max: 6 }), weight: 1 },
)

/** A whole framing: `maxText` as for `lengthPlan`. */
export const framingPlan = (maxText: string): fc.Arbitrary<Framing> =>
  fc.record({ length: lengthPlan(maxText), expect: expectPlan, pieces: piecesPlan })

/** Deterministic bytes for a seed, fast enough for hundreds of KiB per run. */
export function seededBytes(size: number, seed: number): Buffer {
  const bytes = Buffer.alloc(size)
  let x = seed | 1
  for (let i = 0; i < size; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    bytes[i] = x & 0xff
  }
  return bytes
}

export interface BuiltUpload {
  plan: RawPlan
  head: Buffer
  /** The request is exactly what its framing says: it must be answered. */
  whole: boolean
  chunked: boolean
}

/** POST `path` with `headers` (the framing's added) and `body` framed as `f` says. */
export function frameUpload(path: string, headers: [string, string][], body: Buffer, f: Framing): BuiltUpload {
  headers = [...headers, ...(f.expect === 'no' ? [] : [['Expect', '100-continue'] as [string, string]])]
  const length = f.length
  let wire = body
  switch (length.kind) {
    case 'exact':
      headers.push(['Content-Length', String(body.length)])
      break
    case 'missing':
      break
    case 'chunked':
      headers.push(['Transfer-Encoding', 'chunked'])
      wire = Buffer.concat([
        ...(body.length ? [Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')] : []),
        Buffer.from('0\r\n\r\n'),
      ])
      break
    case 'text':
      headers.push(['Content-Length', length.text])
      break
    case 'more':
      headers.push(['Content-Length', String(body.length + length.by)])
      break
    case 'less':
      headers.push(['Content-Length', String(Math.max(0, body.length - length.by))])
      break
  }
  const head = requestHead('POST', path, headers)
  const steps: Step[] = [head]
  if (f.expect === 'wait') steps.push({ continue: true })
  const piece = Math.ceil(wire.length / f.pieces) || 1
  for (let at = 0; at < wire.length; at += piece)
    steps.push(wire.subarray(at, at + piece), ...(f.pieces > 1 ? [{ pause: 2 }] : []))
  // Without a length a request has no body: bytes sent anyway read as the next request, which uWS
  // may drop the connection over before the answer to this one is out.
  const whole = length.kind === 'exact' || length.kind === 'chunked' || (length.kind === 'missing' && body.length === 0)
  const chunked = length.kind === 'chunked'
  if (length.kind === 'more')
    return { plan: { steps: [...steps, { pause: 5 }], after: length.then, timeoutMs: 3000 }, head, whole, chunked }
  return { plan: { steps, timeoutMs: 10_000 }, head, whole, chunked }
}

/**
 * What is wrong with the outcome of one upload: no or a bad answer to a whole one, a bad answer
 * to a broken one. An upload refused before its body is read is answered once the rest of it is
 * in, dropped, when its length was given (gateway/body.ts `drainable`); a chunked one is
 * answered and closed at once, and a client still sending it may lose the answer to a reset.
 */
export function uploadProblems(built: BuiltUpload, outcome: RawOutcome): string[] {
  const [first] = outcome.responses
  if (built.whole && !(built.chunked && outcome.writeFailed && !first)) return outcomeProblems(outcome)
  return first ? answerProblems(first) : []
}
