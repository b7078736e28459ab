// The syntax of one record line: `seq|time|type|result|subject|data|mac`.

import type { LogResultNumber, RecordLine } from '../protocol/browser.js'

const HEX = /^(0|[1-9a-f][0-9a-f]*)$/
const MAC = /^[A-Za-z0-9_-]{22}$/
const DATA = /^[A-Za-z0-9_-]*$/

export type ParsedLine = { ok: true; record: RecordLine } | { ok: false; error: string }

/** A record line's fields before it is MAC'd. */
export type LineFields = Omit<RecordLine, 'mac' | 'signed'>

function hexField(name: string, text: string, maxDigits: number): number | string {
  if (!HEX.test(text) || text.length > maxDigits) return `${name} is not lowercase hex without padding: '${text}'`
  return parseInt(text, 16)
}

/** Parses a record line given without its trailing newline. Checks syntax only, not the MAC. */
export function parseLine(text: string): ParsedLine {
  const fields = text.split('|')
  if (fields.length !== 7) return { ok: false, error: `expected 7 fields, found ${fields.length}` }
  const [seqText, timeText, typeText, resultText, subject, data, mac] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ]
  const seq = hexField('seq', seqText, 8)
  const time = hexField('time', timeText, 13)
  const type = hexField('type', typeText, 4)
  for (const value of [seq, time, type]) if (typeof value === 'string') return { ok: false, error: value }
  if (resultText !== '0' && resultText !== '1' && resultText !== '2') {
    return { ok: false, error: `result must be 0, 1 or 2, found '${resultText}'` }
  }
  if (subject.includes('\r')) return { ok: false, error: 'subject contains a carriage return' }
  if (!DATA.test(data)) return { ok: false, error: 'data is not base64url' }
  if (!MAC.test(mac)) return { ok: false, error: 'mac is not 16 bytes of base64url' }
  const record: RecordLine = {
    seq: seq as number,
    time: time as number,
    type: type as number,
    result: Number(resultText) as LogResultNumber,
    subject,
    data,
    mac,
    signed: text.slice(0, text.length - mac.length),
  }
  return { ok: true, record }
}
