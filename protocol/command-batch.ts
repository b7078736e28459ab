// The commands of one event-loop turn for one subject travel as one message: a NATS message costs
// each process on its way far more than the command it carries (docs/architecture.md, Batches).

import type { CommandReply } from './bus-messages.js'

/**
 * The most one envelope holds: a sender splits a turn's commands into envelopes within both, and a
 * service refuses an envelope of more commands unread. A command bigger than the bytes travels alone.
 * The reply parts keep to the same bytes (the bus's max_payload is four times that).
 */
export const BATCH_LIMITS = { commands: 64, bytes: 256 * 1024 } as const

/**
 * One reply message to an envelope: some of its commands' replies, each with its index in the
 * envelope. A service sends the replies that are ready together, so that a slow command holds back
 * no other; the whole envelope's are usually one part.
 */
export type BatchReplyPart = [index: number, reply: CommandReply][]

/** The msgpack array of already encoded items: an envelope is made without encoding its commands again. */
export function packArray(items: readonly Uint8Array[]): Uint8Array {
  return concat(arrayHeader(items.length), items)
}

/** A reply part (`BatchReplyPart`) of already encoded replies, each with its index in the envelope. */
export function packReplyPart(replies: readonly (readonly [index: number, reply: Uint8Array])[]): Uint8Array {
  return concat(
    arrayHeader(replies.length),
    replies.flatMap(([index, reply]) => [PAIR, unsigned(index), reply]),
  )
}

/** The msgpack header of a two-item array: `[index, reply]`. */
const PAIR = Uint8Array.of(0x92)

function concat(header: Uint8Array, pieces: readonly Uint8Array[]): Uint8Array {
  let length = header.length
  for (const piece of pieces) length += piece.length
  const out = new Uint8Array(length)
  out.set(header)
  let at = header.length
  for (const piece of pieces) {
    out.set(piece, at)
    at += piece.length
  }
  return out
}

function arrayHeader(count: number): Uint8Array {
  if (count < 16) return Uint8Array.of(0x90 | count)
  if (count < 0x10000) return Uint8Array.of(0xdc, count >> 8, count & 0xff)
  throw new RangeError('an envelope holds fewer than 65536 items')
}

function unsigned(value: number): Uint8Array {
  if (!Number.isInteger(value) || value < 0 || value >= 0x10000) throw new RangeError('an index is 0..65535')
  if (value < 0x80) return Uint8Array.of(value)
  if (value < 0x100) return Uint8Array.of(0xcc, value)
  return Uint8Array.of(0xcd, value >> 8, value & 0xff)
}

/** `items` in runs within BATCH_LIMITS, in order; an item bigger than the bytes makes a run of its own. */
export function withinBatchLimits<T>(items: readonly T[], bytesOf: (item: T) => number): T[][] {
  const runs: T[][] = []
  let run: T[] = []
  let bytes = 0
  for (const item of items) {
    const size = bytesOf(item)
    if (run.length === BATCH_LIMITS.commands || (run.length > 0 && bytes + size > BATCH_LIMITS.bytes)) {
      runs.push(run)
      run = []
      bytes = 0
    }
    run.push(item)
    bytes += size
  }
  if (run.length > 0) runs.push(run)
  return runs
}
