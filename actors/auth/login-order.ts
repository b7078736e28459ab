/** An attempt waiting for its check: its client, and its arrival order. */
export interface Queued {
  readonly source: string
  readonly seq: number
}

/** What the login queue decides of an attempt that a client's refusals and the queue's bounds let through or not. */
export type Arrival<T> =
  | { readonly enter: true }
  /** Full, and the attempt is placed before the worst placed client: `bumped`, that client's newest, goes. */
  | { readonly enter: true; readonly bumped: T }
  | { readonly enter: false }

/** A client's standing in the queue. */
interface Place {
  refusals: number
  waiting: number
  /** When its oldest waiting attempt arrived. */
  seq: number
}

/**
 * The order of the login queue, as decisions alone (the queue holds the attempts and runs the
 * checks): the next check goes to the client with the fewest recent refusals, then the fewest
 * attempts waiting; among equals, to the one that asked last (the oldest of a wave waits); a
 * client's own attempts in order. So a client with no recent refusal, asking once (the owner),
 * is checked at the next place of the pace, however many addresses flood.
 */
export function nextTurn<T extends Queued>(
  waiting: readonly T[],
  refusalsOf: (source: string) => number,
): T | undefined {
  let best: { first: T; place: Place } | undefined
  for (const first of firsts(waiting)) {
    const place = placeOf(waiting, first.source, refusalsOf)
    if (!best || before(place, best.place)) best = { first, place }
  }
  return best?.first
}

/**
 * Whether an attempt of `source` that passed its screen may wait for its check, `seq` its arrival
 * order: yes while fewer than `total` wait; when the queue is full, only by taking the newest place
 * of the worst placed client, if the arriving attempt would be placed before that client. So junk
 * can never fill the queue against the owner.
 */
export function arrival<T extends Queued>(
  waiting: readonly T[],
  total: number,
  source: string,
  seq: number,
  refusalsOf: (source: string) => number,
): Arrival<T> {
  if (waiting.length < total) return { enter: true }
  let worst: { source: string; place: Place } | undefined
  for (const { source: other } of firsts(waiting)) {
    const place = placeOf(waiting, other, refusalsOf)
    if (!worst || before(worst.place, place)) worst = { source: other, place }
  }
  if (!worst || worst.source === source || !before(placeOf(waiting, source, refusalsOf, seq), worst.place))
    return { enter: false }
  return { enter: true, bumped: waiting.findLast((attempt) => attempt.source === worst.source)! }
}

/** Attempts one client may have in flight, from arrival to answer: another beyond `perSource` is refused unread. */
export function fitsSource(inFlight: number, perSource: number): boolean {
  return inFlight < perSource
}

/** Each waiting client's oldest attempt. */
function firsts<T extends Queued>(waiting: readonly T[]): T[] {
  const seen = new Map<string, T>()
  for (const attempt of waiting) if (!seen.has(attempt.source)) seen.set(attempt.source, attempt)
  return [...seen.values()]
}

/** Where `source` stands, with one more attempt than it has waiting if `arriving` is its order. */
function placeOf(
  waiting: readonly Queued[],
  source: string,
  refusalsOf: (source: string) => number,
  arriving?: number,
): Place {
  let count = arriving === undefined ? 0 : 1
  let seq = arriving ?? Infinity
  for (const attempt of waiting)
    if (attempt.source === source) {
      count += 1
      seq = Math.min(seq, attempt.seq)
    }
  return { refusals: refusalsOf(source), waiting: count, seq }
}

/** Fewest recent refusals, then fewest attempts waiting, then the client whose oldest attempt came last. */
function before(a: Place, b: Place): boolean {
  if (a.refusals !== b.refusals) return a.refusals < b.refusals
  if (a.waiting !== b.waiting) return a.waiting < b.waiting
  return a.seq > b.seq
}
