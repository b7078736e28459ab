// Splits a segment file into its lines, keeping each line's exact bytes for the chain.

import { parseLine } from './record-line.js'
import type { JournalLine } from './types.js'

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

function classify(line: number, bytes: Uint8Array): JournalLine {
  let text: string
  try {
    text = utf8.decode(bytes.subarray(0, bytes.length - 1))
  } catch {
    return { kind: 'invalid', line, bytes, error: 'line is not valid UTF-8' }
  }
  if (bytes[0] === HASH) return { kind: 'comment', line, bytes, text }
  const parsed = parseLine(text)
  return parsed.ok ? { kind: 'record', line, bytes, record: parsed.record } : { kind: 'invalid', line, bytes, error: parsed.error }
}
