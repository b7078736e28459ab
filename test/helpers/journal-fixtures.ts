import { ed25519 } from '@noble/curves/ed25519.js'
import { createHash } from 'node:crypto'
import type { JournalMedia } from '../../hal/types.js'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { FileJournalMedia } from '../../hal/sim/journal-media.js'
import type { ManualClock } from './clock.js'
import { HeldTimers } from './held-timers.js'
import { fromBase64Url, headMessage, Journal, lineMac, readLines, type JournalOptions } from '../../eventstore/index.js'
import { packData } from '../../eventstore/pack-data.js'
import {
  LogResult,
  LogType,
  type JournalEntry,
  type JournalPosition,
  type RecordLine,
  type SignedHead,
} from '../../protocol/journal.js'

/** Fixtures shared by the journal tests (eventstore-*.test.ts, hem-audit.test.ts). */

export const SECRET = new Uint8Array(32).fill(7)
export const signer = { publicKey: ed25519.getPublicKey(SECRET), sign: (m: Uint8Array) => ed25519.sign(m, SECRET) }
export const START = 1_700_000_000_000
/** The banner `options` uses unless told otherwise. */
export const BANNER = '# hemd test {id}'

/** A clock that stands still at `now` until `advance` (or a sleep) moves it, firing its timers as they fall due. */
export function fixedClock(now = START): ManualClock {
  const timers = new HeldTimers((ms) => void (now += ms))
  const advance = (ms: number) => timers.advance(ms)
  return {
    now: () => now,
    monotonic: () => now,
    isSet: () => true,
    advance,
    sleep: async (ms) => advance(ms),
    timer: timers.timer,
    armed: () => timers.armed(),
  }
}

/** Deterministic bytes: sha256 of `${seed}:${i}` for i = 0, 1, ... */
export function seededRandom(seed: string) {
  let i = 0
  return (n: number): Uint8Array => {
    const out = Buffer.alloc(n)
    for (let o = 0; o < n; o += 32) createHash('sha256').update(`${seed}:${i++}`).digest().copy(out, o)
    return new Uint8Array(out)
  }
}

/** Journal options over `media` with a fresh fixed clock and seeded random; `extra` overrides any of them. */
export function options(media: JournalMedia, extra: Partial<JournalOptions> = {}, banner = BANNER): JournalOptions {
  return { media, signer, clock: fixedClock(), random: seededRandom('k'), banner, ...extra }
}

/** Every file of `media`, in id order, as verifyJournal takes them. */
export async function readSet(media: JournalMedia) {
  return Promise.all((await media.list()).map(async (id) => ({ id, bytes: await media.read(id) })))
}

export function records(bytes: Uint8Array): RecordLine[] {
  return [...readLines(bytes)].flatMap((l) => (l.kind === 'record' ? [l.record] : []))
}

/** The chain computed independently of eventstore/, straight from FORMAT.md. */
export function chainOver(id: string, bytes: Uint8Array): Buffer {
  let head = createHash('sha256').update('hemd.journal.v1').update(id).digest()
  let start = 0
  for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
    head = createHash('sha256')
      .update(head)
      .update(bytes.subarray(start, nl + 1))
      .digest()
    start = nl + 1
  }
  return head
}

/** The banner hemd writes, which names the variant (replay reads it from there). */
export function deviceBanner(variant: 'P' | 'E'): string {
  return `# hemd test journal {id} devid 0011223344556677 variant ${variant}`
}

/** A TRANSITION entry as MachineRunner journals it. */
export function transition(
  machine: string,
  from: string,
  to: string,
  event: string,
  instance?: string,
  version = 1,
): JournalEntry {
  return {
    type: LogType.TRANSITION,
    result: 0,
    data: { machine, ...(instance !== undefined ? { instance } : {}), version, from, to, event },
  }
}

export const KIDS = { aes: 'a'.repeat(32), ec: 'b'.repeat(32), undone: 'c'.repeat(32) }

export interface DeviceJournal {
  /** File ids of each boot. */
  boots: string[][]
  /** Unix seconds of the first record. */
  start: number
  /** Where landmarks landed: personalised (DEVICE_INITED), shutdown (boot 1's SHUTDOWN), updated (CONFIG_UPDATED). */
  marks: Record<'personalised' | 'shutdown' | 'updated', JournalPosition>
}

/** The configuration the first boot of writeDeviceJournal personalises the device with. */
export const PERSONALISED_CONFIG = {
  user: 'Ada',
  email: 'ada@example.com',
  hostname: 'hem.example',
  ip: '192.168.7.1/24',
  storage_mode: 0x53,
  storage_disk0size: 131072,
}
/**
 * A P device's journal in `dir`, written as hemd writes it, over three boots. Boot 1 (one file,
 * closed): provisioned, personalised, disks formatted, two keys, an upload begun, too hot, shut
 * down. Boot 2 (rotating into a file per append, then a crash): disks formatted again, the
 * user renamed, a key changed, one deleted, one whose creation failed. Boot 3: recovery seals
 * boot 2's last file, the device starts; its file is left open when `openEnd`.
 */
export async function writeDeviceJournal(dir: string, openEnd = false): Promise<DeviceJournal> {
  const media = new FileJournalMedia(dir)
  const clock = fixedClock()
  // Sealed by count, at rotation and at close only: the seals the readers' tests expect. Its boots
  // span minutes of its clock, where a device's journal would also seal every 30 s.
  const open = (extra: Partial<JournalOptions> = {}) =>
    Journal.open(options(media, { clock, sealIntervalMs: 3_600_000, ...extra }, deviceBanner('P')))
  const now = () => Math.floor(clock.now() / 1000)
  const step = (seconds: number) => clock.advance(seconds * 1000)
  const ok = LogResult.OK
  const boots: string[][] = []
  const filesSince = async (known: number) => (await media.list()).slice(known)

  const first = await open()
  await first.append([{ type: LogType.STARTUP, result: ok, data: { fwv: '1.0.0', slot: 'A', fls: 0 } }])
  await first.append([transition('lifecycle', 'booting', 'running', 'READY')])
  step(10)
  await first.append([
    transition('provisioning', 'unprovisioned', 'provisioned', 'PROVISION'),
    { type: LogType.CONFIG_UPDATED, result: ok, data: { source: 200, rid: 'r1', provisioned: true } },
  ])
  step(10)
  const cfg = PERSONALISED_CONFIG
  const [, personalised] = await first.append([
    transition('personalisation', 'fresh', 'formatting', 'PERSONALISE'),
    {
      type: LogType.DEVICE_INITED,
      result: ok,
      subject: 'M',
      data: { source: 200, rid: 'r2', cfg, instanceid: 'f'.repeat(32), at: now() },
    },
  ])
  await first.append([transition('personalisation', 'formatting', 'personalised', 'FORMAT_DONE')])
  await first.append([
    transition('disk', 'unformatted', 'locked', 'FORMATTED', '0'),
    transition('disk', 'locked', 'rw', 'UNLOCK_RW', '0'),
    transition('disk', 'unformatted', 'locked', 'FORMATTED', '1'),
  ])
  step(10)
  await first.append([
    {
      type: LogType.AUTH_SUCCESS_INTERNAL,
      result: ok,
      subject: 'U',
      data: { source: 200, scope: 'keymgmt:gen', rid: 'r3' },
    },
    {
      type: LogType.KEY_GENERATION,
      result: ok,
      subject: 'U',
      data: { source: 200, rid: 'r4', kid: KIDS.aes, type: 'AES256', at: now() },
    },
    {
      type: LogType.KEY_IMPORT,
      result: ok,
      subject: 'U',
      data: { source: 200, rid: 'r5', kid: KIDS.ec, type: 'SECP256R1', mode: 'ExDSA', at: now() },
    },
    {
      type: LogType.FAILED_SCOPE_CHECK,
      result: LogResult.FAILED,
      subject: 'U',
      data: { source: 403, scope: 'storage:disk1', rid: 'r6' },
    },
  ])
  step(10)
  await first.append([{ ...transition('upgrade', 'idle', 'receiving', 'UPLOAD_STARTED', 'fw'), subject: 'U' }])
  await first.append([
    transition('health', 'secure', 'failed', 'TEMPERATURE_OUT_OF_RANGE'),
    {
      type: LogType.NON_SECURE_STATE,
      result: LogResult.ERROR,
      data: { fls: 4, raised: 4, source: 'sensor', temp: 90, min: -40, max: 85 },
    },
  ])
  step(10)
  const [, shutdown] = await first.append([
    transition('lifecycle', 'running', 'stopped', 'STOP'),
    { type: LogType.SHUTDOWN, result: ok, subject: 'U', data: { source: 200, rid: 'r7' } },
  ])
  await first.close()
  boots.push(await filesSince(0))

  step(100)
  const second = await open({ rotateBytes: 1 })
  await second.append([
    { type: LogType.STARTUP, result: ok, data: { fwv: '1.0.0', slot: 'A', fls: 0 } },
    transition('lifecycle', 'booting', 'running', 'READY'),
  ])
  await second.append([
    transition('disk', 'unformatted', 'locked', 'FORMATTED', '0'),
    transition('disk', 'locked', 'rw', 'UNLOCK_RW', '0'),
    transition('disk', 'unformatted', 'locked', 'FORMATTED', '1'),
  ])
  step(10)
  const [updated] = await second.append([
    {
      type: LogType.CONFIG_UPDATED,
      result: ok,
      subject: 'U',
      data: { source: 200, rid: 'r8', changed: { user: 'Bob' }, uts: now() },
    },
  ])
  step(10)
  await second.append([
    {
      type: LogType.KEY_ATTRIBUTES_CHANGED,
      result: ok,
      subject: 'U',
      data: { source: 200, rid: 'r9', kid: KIDS.aes, label: true, descr: false, at: now() },
    },
  ])
  await second.append([
    {
      type: LogType.KEY_DELETE,
      result: ok,
      subject: 'U',
      data: { source: 200, rid: 'ra', kid: KIDS.ec, type: 'SECP256R1' },
    },
  ])
  const undone = { source: 200, rid: 'rb', kid: KIDS.undone, type: 'ED25519', at: now() }
  await second.append([{ type: LogType.KEY_GENERATION, result: ok, subject: 'U', data: undone }])
  await second.append([
    { type: LogType.KEY_GENERATION, result: LogResult.ERROR, subject: 'U', data: { ...undone, source: 507 } },
  ])
  await second.append([{ ...transition('disk', 'locked', 'ro', 'UNLOCK_RO', '1'), subject: 'U' }])
  await crash(second)
  boots.push(await filesSince(boots.flat().length))

  step(100)
  const third = await open()
  await third.append([
    { type: LogType.STARTUP, result: ok, data: { fwv: '1.0.0', slot: 'A', fls: 0 } },
    transition('lifecycle', 'booting', 'running', 'READY'),
  ])
  await third.append([transition('disk', 'unformatted', 'locked', 'FORMATTED', '0')])
  await (openEnd ? crash(third) : third.close())
  boots.push(await filesSince(boots.flat().length))
  return { boots, start: START / 1000, marks: { personalised: personalised!, shutdown: shutdown!, updated: updated! } }

  /** Closes the journal, then cuts the close seal off its last file, as a crash would have left it. */
  async function crash(journal: Journal): Promise<void> {
    await journal.close()
    const id = (await media.list()).at(-1)!
    const bytes = await media.read(id)
    await writeFile(join(dir, `${id}.log`), bytes.subarray(0, bytes.lastIndexOf(10, bytes.length - 2) + 1))
  }
}

/** The signed head a device would give for `media` as it is now: its newest file's last record. */
export async function signedHeadOf(media: JournalMedia): Promise<SignedHead> {
  const file = (await media.list()).at(-1)!
  const bytes = await media.read(file)
  const seq = records(bytes).at(-1)!.seq
  const head = chainOver(file, bytes)
  const sig = signer.sign(headMessage(file, seq, head))
  return { file, seq, head: head.toString('base64'), sig: Buffer.from(sig).toString('base64') }
}

/**
 * Appends a record to a file as anyone holding the file could: K is in clear in its KEY_INIT, so
 * the line's MAC is valid; only a seal or a signed head could tell it from the device's own.
 */
export function forgedLine(bytes: Uint8Array, entry: { type: number; data: Record<string, unknown> }): Buffer {
  const all = records(bytes)
  const key = fromBase64Url(all[0]!.subject)!
  const last = all.at(-1)!
  const hex = (n: number) => n.toString(16)
  const signed = `${hex(last.seq + 1)}|${hex(last.time)}|${hex(entry.type)}|0||${packData(entry.data)}|`
  return Buffer.concat([bytes, Buffer.from(`${signed}${lineMac(key, signed)}\n`)])
}
