// An upgrade from a build that kept the journal's anchor unsigned (issue 35 item 3, open point 1):
// the trial boot of the new firmware trusts that anchor once, when it agrees with the files, and
// re-writes it signed, journaled in STARTUP; at any other boot an unsigned anchor is a tamper (0x08).
import { copyFile, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { FLS } from '../protocol/index.js'
import { LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'

const anchorPath = (dataDir: string): string => join(dataDir, 'enclave', 'journal-anchor.json')
const TRIAL = { booted: { slot: 'B', trial: true } } as const

/** Rewrites the signed anchor as builds before signed anchors kept it: `{file, seq, head}`, no sig, no after. */
async function asUnsigned(path: string): Promise<{ file: string; seq: number }> {
  const { file, seq, head } = JSON.parse(await readFile(path, 'utf8')) as { file: string; seq: number; head: string }
  await writeFile(path, `${JSON.stringify({ file, seq, head })}\n`)
  return { file, seq }
}

async function bootTimes(t: Test, dataDir: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) await (await bootDevice(t, { dataDir, variant: 'E' })).stop()
}

/** Boots, reads fls_state and how the trial ended, stops. */
async function bootOnce(t: Test, dataDir: string, trial: boolean) {
  const device = await bootDevice(t, { dataDir, variant: 'E', ...(trial ? TRIAL : {}) })
  const fls = (await call(`${device.httpUrl!}/api/system/status`)).json.fls_state as number
  const outcome = device.trial
  await device.stop()
  return { fls, trial: outcome }
}

async function journaled(dataDir: string) {
  const { records } = await readJournal(dataDir)
  return {
    tampers: records.filter((r) => r.type === LogType.NON_SECURE_STATE && r.decoded?.source === 'journal'),
    startups: records.filter((r) => r.type === LogType.STARTUP),
  }
}

t.test("an upgrade's trial boot migrates an unsigned anchor that agrees with the files", async (t) => {
  const dataDir = t.testdir()
  await bootTimes(t, dataDir, 1)
  const unsigned = await asUnsigned(anchorPath(dataDir))
  t.same(await bootOnce(t, dataDir, true), { fls: 0, trial: 'confirmed' }, 'the trial is healthy and confirmed')
  const stored = JSON.parse(await readFile(anchorPath(dataDir), 'utf8')) as Record<string, unknown>
  t.type(stored.sig, 'string', 'the anchor is signed now')
  const { tampers, startups } = await journaled(dataDir)
  t.same(tampers, [], 'no tamper')
  t.match(startups.at(-1), { result: 0, decoded: { anchor_migrated: unsigned } }, 'STARTUP says it was migrated')
  t.same(await bootOnce(t, dataDir, false), { fls: 0, trial: undefined }, 'the next boot is secure')
  t.notOk((await journaled(dataDir)).startups.at(-1)!.decoded!.anchor_migrated, 'migrated once')
})

t.test('an unsigned anchor at a boot that is no trial is a tamper', async (t) => {
  const dataDir = t.testdir()
  await bootTimes(t, dataDir, 1)
  await asUnsigned(anchorPath(dataDir))
  const { fls } = await bootOnce(t, dataDir, false)
  t.equal(fls & FLS.INTEGRITY, FLS.INTEGRITY, 'fls_state has 0x08')
  t.match((await journaled(dataDir)).tampers, [{ result: 2, decoded: { raised: FLS.INTEGRITY, source: 'journal' } }])
  t.notOk((await journaled(dataDir)).startups.at(-1)!.decoded!.anchor_migrated, 'nothing migrated')
})

t.test('an unsigned anchor behind the files is not migrated, even at a trial boot: the trial is refused', async (t) => {
  const dataDir = t.testdir()
  await bootTimes(t, dataDir, 1)
  const saved = join(dataDir, 'saved-anchor.json')
  await copyFile(anchorPath(dataDir), saved)
  await bootTimes(t, dataDir, 1)
  await asUnsigned(saved)
  await copyFile(saved, anchorPath(dataDir))
  const { fls, trial } = await bootOnce(t, dataDir, true)
  t.equal(fls & FLS.INTEGRITY, FLS.INTEGRITY, 'fls_state has 0x08')
  t.equal(trial, 'refused', 'the trial does not confirm: the bootloader rolls it back')
  const { tampers, startups } = await journaled(dataDir)
  t.equal(tampers.length, 1, 'the tamper is journaled')
  t.notOk(startups.at(-1)!.decoded!.anchor_migrated, 'nothing migrated')
})
