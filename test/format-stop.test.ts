// A stop, a reboot or a wipeout while the disks are formatted (the format held between Disk 0 and
// Disk 1 by the simulator): the format is cancelled at its next step and waited for, so that
// nothing writes the disks of a device that stopped, or under a boot that starts another format;
// the cancel is journaled (DISK_FORMAT cancelled, FAILED), and the next boot formats the disks again.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { setSimFormatHold, simFormatHeld } from '../hal/sim/format-hold.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { expectFresh } from './helpers/fresh-device.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { api } from './helpers/keys.js'
import { rebooted, boots } from './helpers/model-device.js'
import { personalise } from './helpers/owner.js'
import { until } from './helpers/until.js'

const formatShown = async (base: string) => (await call(`${base}/api/system/status`)).json.format as unknown

/** The DISK_FORMAT records, as `phase` with its cause or reason. */
async function formatRecords(dataDir: string): Promise<string[]> {
  const { records } = await readJournal(dataDir)
  return records
    .filter((r) => r.type === LogType.DISK_FORMAT)
    .map((r) => [r.decoded?.phase, r.decoded?.cause ?? r.decoded?.reason].filter((w) => w !== undefined).join(' '))
}

const heldInTheMiddle = (dataDir: string) =>
  until('the format held between Disk 0 and Disk 1', async () => (await simFormatHeld(dataDir)) === 'middle')

t.test('stop() cancels a format and waits for it to end; the next boot formats the disks', async (t) => {
  const dataDir = t.testdir()
  const device = await bootDevice(t, { dataDir })
  await setSimFormatHold(dataDir, 'middle')
  t.equal((await personalise(device.httpUrl!, 'P')).status, 200, 'personalised')
  await heldInTheMiddle(dataDir)

  await device.stop()
  t.equal(await simFormatHeld(dataDir), undefined, 'once stop() resolves, the format has left the disks')
  t.notOk(existsSync(join(dataDir, 'disks', 'layout.json')), 'the disks have no layout: unformatted')
  t.notOk(existsSync(join(dataDir, 'disks', 'disk1.img')), 'Disk 1 was never written')
  t.same(await formatRecords(dataDir), ['start personalisation', 'cancelled stop'], 'the cancel is journaled')
  const { records } = await readJournal(dataDir)
  t.equal(records.find((r) => r.decoded?.phase === 'cancelled')?.result, LogResult.FAILED, 'as FAILED')

  await setSimFormatHold(dataDir, undefined)
  const again = await bootDevice(t, { dataDir })
  await until('formatted', async () => (await formatShown(again.httpUrl!)) === 'done')
  t.same(
    await formatRecords(dataDir),
    ['start personalisation', 'cancelled stop', 'start boot', 'done'],
    'the next boot starts the format again (no interruption: it was cancelled) and finishes it',
  )
})

t.test('a reboot cancels a reformat before its boot starts it again', async (t) => {
  const dataDir = t.testdir()
  const device = await bootDevice(t, { dataDir })
  const base = device.httpUrl!
  const init = await personalise(base, 'P')
  await until('formatted', async () => (await formatShown(base)) === 'done')
  await setSimFormatHold(dataDir, 'middle')
  const resized = await api(`${base}/api/system/config`, init.json.token, { storage_disk0size: 196608 })
  t.equal(resized.status, 200, 'a new Disk 0 size')
  await heldInTheMiddle(dataDir)

  const before = await boots(dataDir)
  await device.restart()
  await rebooted(base, dataDir, before)
  // The boot's own format reaches the same point: the one before it had left it.
  await heldInTheMiddle(dataDir)
  t.same(
    (await formatRecords(dataDir)).slice(2),
    ['start reformat', 'cancelled stop', 'start boot'],
    "the reboot's stop cancelled the reformat, its boot started it again",
  )
  await setSimFormatHold(dataDir, undefined)
  // The disks take their new layout just after status shows the format done.
  await until('reformatted', async () => {
    const { format, storage } = (await call(`${base}/api/system/status`)).json
    return format === 'done' && storage[0].startsWith('196608:')
  })
  t.same((await formatRecords(dataDir)).slice(5), ['done'], 'and it finished')
})

t.test('a wipeout cancels a format before it erases the disks', async (t) => {
  const dataDir = t.testdir()
  const device = await bootDevice(t, { dataDir })
  const base = device.httpUrl!
  await setSimFormatHold(dataDir, 'middle')
  const init = await personalise(base, 'P')
  await heldInTheMiddle(dataDir)
  const before = await boots(dataDir)
  t.equal((await api(`${base}/api/system/config`, init.json.token, { wipeout: true })).status, 200, 'wiped out')
  await rebooted(base, dataDir, before)
  t.same(await formatRecords(dataDir), ['start personalisation', 'cancelled wipeout'], 'the wipeout cancelled it')
  await expectFresh(t, base, dataDir, 'P')
})
