// The story of a device, one event per journal record: when, where in the files, who, what,
// how it ended, and the facts of its data that are safe to show. Without node: the management app
// tells its timeline with it too (audit/browser.ts), so it imports only the units' browser faces.

import { parseLinkData, parseSealData, parseTransitionData } from '../eventstore/browser.js'
import { LogType, logTypeName, logTypePhrase, type RecordLine } from '../protocol/browser.js'

/** A verified record with its file and decoded data (an AuditRecord is one). */
export interface TimelineRecord extends RecordLine {
  file: string
  decoded: Record<string, unknown> | undefined
}

export type Fact = string | number | boolean

export interface TimelineEvent {
  /** Unix seconds, and the same in ISO 8601. */
  time: number
  iso: string
  file: string
  seq: number
  type: number
  /** The family's name of the type, e.g. `KEY_GENERATION`. */
  name: string
  /** What happened, readable: `key generated`, `transition disk 0 locked → rw by UNLOCK_RW`. */
  what: string
  /** The record's subject: `U`, `M`, an ExtAuth id, or empty (the device itself). */
  subject: string
  result: 'OK' | 'FAILED' | 'ERROR'
  /** The HTTP status of the request, when the record answers one. */
  status?: number
  facts: Record<string, Fact>
}

export interface TimelineFilter {
  /** Only these types (any of them). */
  types?: number[]
  /** Only records with exactly this subject (empty: the device's own). */
  subject?: string
  /** Unix seconds, both included. */
  since?: number
  until?: number
  /** Also KEY_INIT, LINK and SEAL, the journal's own plumbing. */
  all?: boolean
}

const PLUMBING = new Set<number>([LogType.KEY_INIT, LogType.LINK, LogType.SEAL])
const RESULTS = ['OK', 'FAILED', 'ERROR'] as const

/**
 * Data fields shown as they are: identifiers, scopes, reasons, counts. Anything else in a
 * record's data is left out, so that nothing unexpected (let alone a secret) is ever printed.
 */
const SCALARS = [
  'kid',
  'type',
  'mode',
  'scope',
  'rid',
  'id',
  'offset',
  'kind',
  'version',
  'sha256',
  'slot',
  'fwv',
  'engine',
  'entropy',
  'test',
  'reason',
  'instanceid',
  'temp',
  'min',
  'max',
  'used',
  'limit',
  'invalid',
  'file',
  'wipeout',
  'provisioned',
  'label',
  'descr',
  'uts',
  'phase',
  'cause',
  'disk0',
  'disk1',
  'count',
  'source_kid',
] as const
/** Fail-state bit masks, shown in hex. */
const MASKS = ['fls', 'raised', 'cleared'] as const
/** Lists of names: shown joined. */
const NAME_LISTS = ['secrets', 'failed'] as const
const MAX_TEXT = 80

export function timeline(records: TimelineRecord[], filter: TimelineFilter = {}): TimelineEvent[] {
  const types = filter.types && new Set(filter.types)
  return records
    .filter(
      (r) =>
        (filter.all || types?.has(r.type) || !PLUMBING.has(r.type)) &&
        (!types || types.has(r.type)) &&
        (filter.subject === undefined || (r.type !== LogType.KEY_INIT && r.subject === filter.subject)) &&
        (filter.since === undefined || r.time >= filter.since) &&
        (filter.until === undefined || r.time <= filter.until),
    )
    .map(toEvent)
}

function toEvent(record: TimelineRecord): TimelineEvent {
  const data = record.decoded ?? {}
  const status = typeof data.source === 'number' && Number.isInteger(data.source) ? data.source : undefined
  return {
    time: record.time,
    iso: new Date(record.time * 1000).toISOString(),
    file: record.file,
    seq: record.seq,
    type: record.type,
    name: logTypeName(record.type),
    what: describe(record),
    // KEY_INIT's subject is the file key: never shown.
    subject: record.type === LogType.KEY_INIT ? '' : record.subject,
    result: RESULTS[record.result],
    ...(status !== undefined ? { status } : {}),
    facts: facts(record),
  }
}

function describe(record: TimelineRecord): string {
  if (record.type !== LogType.TRANSITION) return logTypePhrase(record.type)
  const t = parseTransitionData(record.decoded)
  if (!t) return 'transition (malformed data)'
  const machine = t.instance === undefined ? t.machine : `${t.machine} ${t.instance}`
  return `transition ${text(machine)} ${text(t.from)} → ${text(t.to)} by ${text(t.event)}`
}

function facts(record: TimelineRecord): Record<string, Fact> {
  const data = record.decoded
  if (!data || record.type === LogType.TRANSITION) return {}
  if (record.type === LogType.LINK) {
    const link = parseLinkData(data)
    return link?.prev ? { prev: link.prev, ...(link.seq !== null ? { seq: link.seq.toString(16) } : {}) } : {}
  }
  if (record.type === LogType.SEAL) {
    const seal = parseSealData(data)
    return seal ? { reason: seal.reason, head: `${hex(seal.head.subarray(0, 8))}…` } : {}
  }
  const found: Record<string, Fact> = {}
  if (typeof data.source === 'string') found.source = text(data.source)
  for (const key of SCALARS) {
    const value = data[key]
    if (typeof value === 'string') found[key] = text(value)
    else if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) found[key] = value
  }
  for (const key of MASKS)
    if (Number.isSafeInteger(data[key])) found[key] = `0x${(data[key] as number).toString(16).padStart(2, '0')}`
  for (const key of NAME_LISTS) {
    const value = data[key]
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) found[key] = text(value.join(','))
  }
  // Which configuration fields changed, not their values.
  if (typeof data.changed === 'object' && data.changed !== null && !(data.changed instanceof Uint8Array)) {
    found.changed = text(Object.keys(data.changed).join(','))
  }
  return found
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** Printable and short: a record's text is the device's, but a terminal need not trust it. */
function text(value: string): string {
  const clean = value.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')
  return clean.length > MAX_TEXT ? `${clean.slice(0, MAX_TEXT)}…` : clean
}

const LOGINS = new Set<number>([LogType.AUTH_SUCCESS_INTERNAL, LogType.AUTH_SUCCESS_EXTERNAL])

/** What `eventWho` calls the subject of a refused login: the device never learnt who tried. */
export const FAILED_LOGIN_WHO = 'unknown (failed login)'

/** A refused login: its record is the device's (no subject), but nobody logged in. */
export function isFailedLogin(event: Pick<TimelineEvent, 'type' | 'result' | 'subject'>): boolean {
  return LOGINS.has(event.type) && event.result !== 'OK' && event.subject === ''
}

export function isLogin(event: Pick<TimelineEvent, 'type'>): boolean {
  return LOGINS.has(event.type)
}

/** Who an event was: `whoWord` of its subject, but a refused login's is unknown rather than the device's. */
export function eventWho(event: TimelineEvent): string {
  return isFailedLogin(event) ? FAILED_LOGIN_WHO : whoWord(event.subject)
}

/** Who a record's subject names: `device` (empty), `user` (U), `master` (M), or the ExtAuth id. */
export function whoWord(subject: string): string {
  return subject === '' ? 'device' : subject === 'U' ? 'user' : subject === 'M' ? 'master' : text(subject)
}

/** One line: time, position, who, what, result (with the HTTP status), facts. */
export function formatTimelineEvent(event: TimelineEvent): string {
  const who = eventWho(event)
  const result = event.status === undefined ? event.result : `${event.result} ${event.status}`
  const facts = Object.entries(event.facts)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ')
  const where = `${event.file}:${event.seq.toString(16)}`
  const line =
    `${event.iso.replace('.000Z', 'Z')}  ${where.padEnd(13)}  ${who.padEnd(7)}  ` +
    `${event.what.padEnd(34)}  ${result.padEnd(10)}  ${facts}`
  return line.trimEnd()
}
