// A power cut (SIGKILL of hemd's process group) at each point of a format of the disks, held there
// by the simulator (`hemd sim format POINT`): before its first write, between Disk 0 and Disk 1,
// and with everything written but the format not yet journaled done. Neither what the cut left nor
// the last format's layout is ever served as a disk; the next boot journals the format as
// interrupted and starts it again from its beginning, until one runs through. For the first
// format (personalisation) and for a reformat (a new Disk 0 size); the journal verifies and
// replays to the device's state.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { setSimFormatHold, simFormatHeld } from '../hal/sim/format-hold.js'
import type { FormatHoldPoint } from '../hal/types.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { call } from './helpers/http.js'
import { auditBin, hemdBin, powerCut, runHemd, runToEnd, type HemdProcess } from './helpers/hemd-process.js'
import { readJournal } from './helpers/journal.js'
import { api } from './helpers/keys.js'
import { login, personalise } from './helpers/owner.js'
import { until } from './helpers/until.js'

const POINTS: FormatHoldPoint[] = ['start', 'middle', 'end']
const RESIZED_DISK0 = 196608

const status = async (base: string) => (await call(`${base}/api/system/status`)).json

/**
 * While a format waits to finish, no disk is served: both show locked, and the owner cannot unlock
 * Disk 0, which storage_mode (0x51) would otherwise bring up at boot.
 */
async function notServed(t: Test, base: string, when: string): Promise<void> {
  const shown = await status(base)
  t.match(shown.format, /^status\d+$/, `${when}: status shows the format under way (${shown.format})`)
  // status joins two read models, the format's and the disks': the disks' may show the locking a moment later.
  const locked = (storage: string[]) => storage.every((disk) => disk.endsWith(':-'))
  let storage: string[] = shown.storage
  await until(`${when}: both disks shown locked`, async () => locked((storage = (await status(base)).storage)))
  t.ok(locked(storage), `${when}: both disks locked (${storage})`)
  const unlock = await api(`${base}/api/storage/unlock`, await login(base, 'storage:disk0:rw'))
  t.match(unlock, { status: 409, json: { error: 'not_formatted' } }, `${when}: Disk 0 cannot be unlocked`)
}

/** The DISK_FORMAT records after the `from`-th one, as `phase` or `phase cause`. */
async function formatRecords(dataDir: string, from = 0): Promise<string[]> {
  const { records } = await readJournal(dataDir)
  return records
    .filter((r) => r.type === LogType.DISK_FORMAT)
    .slice(from)
    .map((r) => [r.decoded?.phase, r.decoded?.cause].filter((w) => w !== undefined).join(' '))
}

t.test('a power cut at each point of a format: never served, formatted again by the next boots', async (t) => {
  const data = join(t.testdir(), 'data')
  // Each boot listens where the kernel gives it a port: a port picked free beforehand can be taken
  // by another test's listener before hemd binds it, and a power cut frees it again.
  let base = ''
  const start = async () => {
    const hemd = await runHemd(t, ['--data', data])
    base = hemd.httpUrl
    return hemd
  }
  /** Cuts the power where the format waits, then boots with every format held at `next` (or none). */
  const cutAndBoot = async (hemd: HemdProcess, next: FormatHoldPoint | undefined) => {
    await powerCut(hemd, data)
    await setSimFormatHold(data, next)
    return start()
  }
  const heldAt = (point: FormatHoldPoint) =>
    until(`held at ${point}`, async () => (await simFormatHeld(data)) === point)

  /** `hemd sim format POINT`, as a drill would: the running device holds its formats from now on. */
  const simHold = async (point: FormatHoldPoint) =>
    t.equal((await runToEnd(hemdBin, ['sim', '--data', data, 'format', point])).code, 0, `hemd sim format ${point}`)

  // The first format, of a new owner.
  let hemd = await start()
  await simHold('start')
  t.equal((await personalise(base, 'P')).status, 200, 'personalised')
  for (const [i, point] of POINTS.entries()) {
    await heldAt(point)
    await notServed(t, base, `personalisation's format at ${point}`)
    hemd = await cutAndBoot(hemd, POINTS[i + 1])
  }
  await until('formatted', async () => (await status(base)).format === 'done')
  t.same(
    await formatRecords(data),
    ['start personalisation', ...POINTS.flatMap(() => ['interrupted', 'start boot']), 'done'],
    'each cut is journaled as an interruption, each boot starts the format again, the last one finishes it',
  )
  t.equal(
    (await api(`${base}/api/storage/unlock`, await login(base, 'storage:disk1:rw'))).status,
    200,
    'formatted: Disk 1 unlocks',
  )

  // A reformat: until it is done, the disks of the last format are not served either.
  const before = (await formatRecords(data)).length
  await simHold('start')
  const resized = await api(`${base}/api/system/config`, await login(base, 'system:config'), {
    storage_disk0size: RESIZED_DISK0,
  })
  t.equal(resized.status, 200, 'a new Disk 0 size')
  for (const [i, point] of POINTS.entries()) {
    await heldAt(point)
    await notServed(t, base, `the reformat at ${point}`)
    hemd = await cutAndBoot(hemd, POINTS[i + 1])
  }
  // The disks take their new layout just after status shows the format done.
  await until('reformatted', async () => {
    const { format, storage } = await status(base)
    return format === 'done' && storage[0].startsWith(`${RESIZED_DISK0}:`)
  })
  t.same(
    await formatRecords(data, before),
    ['start reformat', ...POINTS.flatMap(() => ['interrupted', 'start boot']), 'done'],
    'the reformat too',
  )
  t.pass(`Disk 0 has its new size: ${(await status(base)).storage}`)
  const { records } = await readJournal(data)
  t.same(
    records
      .filter((r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'personalisation')
      .map((r) => r.decoded?.event),
    ['PERSONALISE', 'FORMAT_DONE', 'REFORMAT', 'FORMAT_DONE'],
    'the personalisation machine left `formatting` only when a format was done',
  )
  t.ok(
    records
      .filter((r) => r.type === LogType.DISK_FORMAT && r.decoded?.phase === 'interrupted')
      .every((r) => r.result === LogResult.FAILED),
    'an interruption is a FAILED record',
  )

  t.equal(await hemd.interrupt(), 0, 'a clean stop')
  const verify = await runToEnd(auditBin, ['verify', '--key', hemd.logKey, join(data, 'journal')])
  t.equal(verify.code, 0, `hem-audit verify: ${verify.stdout}${verify.stderr}`)
  const replay = await runToEnd(auditBin, ['replay', '--json', '--key', hemd.logKey, join(data, 'journal')])
  t.equal(replay.code, 0, replay.stderr)
  t.match(JSON.parse(replay.stdout), { personalisation: 'personalised', config: { storage_disk0size: RESIZED_DISK0 } })
})
