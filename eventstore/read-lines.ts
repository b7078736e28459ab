// Splits a segment file into its lines, keeping each line's exact bytes for the chain.

import { parseLine } from './record-line.js'
import type { JournalLine } from '../protocol/browser.js'

const NEWLINE = 0x0a
const HASH = 0x23
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Every line of `bytes` in order; bytes after the last newline come last as an invalid line. */
export function* readLines(bytes: Uint8Array): Generator<JournalLine> {
  let start = 0
  let line = 1
  while (start < bytes.length) {
    const newline = bytes.indexOf(NEWLINE, start)
    if (newline < 0) {
      yield { kind: 'invalid', line, bytes: bytes.subarray(start), error: 'incomplete last line (no newline)' }
      return
    }
    const lineBytes = bytes.subarray(start, newline + 1)
    yield classify(line, lineBytes)
    start = newline + 1
    line++
  }
}

const BAR = 0x7c

/**
 * The record lines of `bytes` whose type is one of `types`, in order; every other line is passed
 * over by its type field alone, unparsed (a boot's fold wants a few types out of 100 000 records).
 * For files already verified: a line whose type cannot be read this way is left out.
 */
export function* readRecordLines(
  bytes: Uint8Array,
  types: ReadonlySet<number>,
): Generator<JournalLine & { kind: 'record' }> {
  for (const { line, start, newline } of lineBounds(bytes)) {
    if (bytes[start] === HASH) continue
    const type = typeField(bytes, start, newline)
    if (type === undefined || !types.has(type)) continue
    const classified = classify(line, bytes.subarray(start, newline + 1))
    if (classified.kind === 'record') yield classified
  }
}

/**
 * The record line whose seq is `seq`, the first in `bytes`, passing each line before it to `each`
 * (with its newline) unparsed: a seq that is not the one sought is told by its field alone.
 */
export function findRecordLine(
  bytes: Uint8Array,
  seq: number,
  each: (line: Uint8Array) => void,
): (JournalLine & { kind: 'record' }) | undefined {
  for (const { line, start, newline } of lineBounds(bytes)) {
    const lineBytes = bytes.subarray(start, newline + 1)
    each(lineBytes)
    if (bytes[start] === HASH || hexField(bytes, start, newline) !== seq) continue
    // A field read as `seq` may still be no record's (leading zeros, another field broken).
    const classified = classify(line, lineBytes)
    if (classified.kind === 'record' && classified.record.seq === seq) return classified
  }
  return undefined
}

/** Each complete line of `bytes`: its number (from 1), where it starts and where its newline is; one object reused. */
function* lineBounds(bytes: Uint8Array): Generator<{ line: number; start: number; newline: number }> {
  const bounds = { line: 0, start: 0, newline: 0 }
  for (let start = 0, newline = bytes.indexOf(NEWLINE); newline >= 0; newline = bytes.indexOf(NEWLINE, start)) {
    bounds.line += 1
    bounds.start = start
    bounds.newline = newline
    yield bounds
    start = newline + 1
  }
}

/** `seq|time|type|…`: the third field, hex, read from the bytes. */
function typeField(bytes: Uint8Array, start: number, end: number): number | undefined {
  const first = bytes.indexOf(BAR, start)
  const second = first < 0 || first > end ? -1 : bytes.indexOf(BAR, first + 1)
  if (second < 0 || second > end) return undefined
  return hexField(bytes, second + 1, end)
}

/** The hex field at `start`, up to the next `|` before `end`. */
function hexField(bytes: Uint8Array, start: number, end: number): number | undefined {
  let value = 0
  let at = start
  for (; at < end && bytes[at] !== BAR; at++) {
    const digit = hexDigit(bytes[at]!)
    if (digit < 0) return undefined
    value = value * 16 + digit
  }
  return at > start && at < end ? value : undefined
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  if (c >= 0x61 && c <= 0x66) return c - 0x57
  return -1
}

function classify(line: number, bytes: Uint8Array): JournalLine {
  let text: string
  try {
    text = utf8.decode(bytes.subarray(0, bytes.length - 1))
  } catch {
    return { kind: 'invalid', line, bytes, error: 'line is not valid UTF-8' }
  }
  if (bytes[0] === HASH) return { kind: 'comment', line, bytes, text }
  const parsed = parseLine(text)
  return parsed.ok
    ? { kind: 'record', line, bytes, record: parsed.record }
    : { kind: 'invalid', line, bytes, error: parsed.error }
}
