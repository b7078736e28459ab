// A journal that refuses a step of an upload, check or install: the operation fails with the
// journal's own status, and once the journal takes records again the pipeline is usable: no
// machine is left in `receiving`, `checking` or `installing` (409 or 202 until a reboot). Real bus
// and P HAL, the upgrade actor in process, the journal scripted to refuse.
import t, { type Test } from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { StagingWriter } from '../hal/types.js'
import { LogResult, LogType, type JournalEntry, type TransitionData } from '../protocol/journal.js'
import { identity, refusingJournal, scriptedBearer, scriptedIdentity } from './helpers/scripted-identity.js'
import { until } from './helpers/until.js'
import { upgradeActorOn } from './helpers/upgrade-actor.js'
import { imageOf } from './helpers/upload.js'

/** A management-app image for P (t.testdir() would be the HAL's folder). */
async function appImage(t: Test): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'hemd-app-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'index.html'), '<h1>hem</h1>')
  return imageOf(dir, 'ui', 'ui-1', ['P'])
}

const eventOf = (entries: JournalEntry[]) =>
  entries.filter((e) => e.type === LogType.TRANSITION).map((e) => (e.data as unknown as TransitionData).event)

async function setup(t: Test) {
  const scripted = await scriptedIdentity(t, 'P', identity(true))
  const { hal, journaled } = scripted
  /** The transition events the journal refuses (all records while `refuseAll`); what it refused. */
  const refuse = new Set<string>()
  const refused: string[] = []
  let refuseAll = false
  const journal = refusingJournal(scripted, (entries) => {
    const events = eventOf(entries)
    if (!refuseAll && !events.some((event) => refuse.has(event))) return false
    refused.push(...events)
    return true
  })
  const { gateway } = await upgradeActorOn(t, scripted, journal)
  const bearer = scriptedBearer('U', 'system:config')
  let rids = 0
  const request = (op: string, body: Record<string, unknown> = {}) =>
    gateway.request('upgrade', op, { rid: `r${++rids}`, tls: true, bearer, body }, 60_000)
  const begin = async (image: Buffer) => {
    const begun = await request('upload_begin_ui', { size: image.length })
    t.equal(begun.status, 200, 'the upload starts')
    return (begun.body as { upload: string }).upload
  }
  const uploaded = async (image: Buffer) => {
    const upload = await begin(image)
    t.equal((await request('upload_chunk', { upload, offset: 0, data: image })).status, 200)
    t.equal((await request('upload_end', { upload })).status, 200, 'uploaded')
  }
  const verified = async (image: Buffer) => {
    await uploaded(image)
    t.equal((await request('check_ui')).status, 201, 'the check starts')
    await until('verified', async () => (await request('check_ui')).status === 200)
  }
  const journaling = (on: boolean) => void (refuseAll = !on)
  return { hal, journaled, refuse, refused, journaling, request, begin, uploaded, verified }
}

t.test('a refused UPLOAD_STARTED is 503, not a storage failure, and staging is not touched', async (t) => {
  const { hal, journaling, request, begin, verified } = await setup(t)
  const image = await appImage(t)
  await verified(image)
  let opened = 0
  const open = hal.staging.begin.bind(hal.staging)
  t.capture(hal.staging, 'begin', async (kind: 'fw' | 'ui') => {
    opened++
    return open(kind)
  })
  journaling(false)
  t.match(await request('upload_begin_ui', { size: 64 }), { status: 503, body: { error: 'bus_unavailable' } })
  t.equal(opened, 0, 'decided and journaled before staging opens')
  journaling(true)
  t.equal((await request('check_ui')).status, 200, 'the verified image is still staged and verified')
  await begin(Buffer.alloc(64))
})

t.test('staging that cannot open: the upload is 500 and the pipeline back in idle', async (t) => {
  const { hal, journaled, request, begin } = await setup(t)
  const open = hal.staging.begin.bind(hal.staging)
  let fail = true
  t.capture(hal.staging, 'begin', async (kind: 'fw' | 'ui') => {
    if (fail) throw Object.assign(new Error('EIO: the staging disk'), { code: 'EIO' })
    return open(kind)
  })
  t.match(await request('upload_begin_ui', { size: 64 }), { status: 500, body: { error: 'storage_error' } })
  t.same(eventOf(journaled), ['UPLOAD_STARTED', 'UPLOAD_FAILED'], 'receiving while staging opened, then idle')
  fail = false
  await begin(Buffer.alloc(64))
})

t.test('an end the journal does not take: the upload stays open until aborted', async (t) => {
  const { journaled, journaling, request, begin } = await setup(t)
  const image = Buffer.alloc(64)
  const upload = await begin(image)
  t.equal((await request('upload_chunk', { upload, offset: 0, data: image })).status, 200)
  journaling(false)
  t.equal((await request('upload_end', { upload })).status, 503, 'the journal is out of reach')
  journaling(true)
  t.match(await request('upload_begin_ui', { size: 64 }), { status: 409 }, 'still receiving')
  t.equal((await request('upload_abort', { upload })).status, 200)
  t.same(eventOf(journaled).slice(-1), ['UPLOAD_FAILED'], 'the abort dropped it')
  await begin(image)
})

t.test('a drop the journal does not take: the upload stays open until aborted', async (t) => {
  const { journaled, journaling, request, begin } = await setup(t)
  const upload = await begin(Buffer.alloc(64))
  journaling(false)
  t.equal((await request('upload_chunk', { upload, offset: 9, data: Buffer.alloc(1) })).status, 503)
  journaling(true)
  t.equal((await request('upload_abort', { upload })).status, 200)
  t.same(eventOf(journaled).slice(-1), ['UPLOAD_FAILED'])
  await begin(Buffer.alloc(64))
})

t.test('a check outcome the journal does not take is journaled before the next command', async (t) => {
  const { journaled, refuse, refused, request, begin, uploaded } = await setup(t)
  const image = await appImage(t)
  await uploaded(image)
  refuse.add('CHECK_PASSED')
  t.equal((await request('check_ui')).status, 201)
  await until('the check ended', () => refused.includes('CHECK_PASSED'))
  t.equal((await request('check_ui')).status, 503, 'while the journal refuses it, it says so')
  refuse.clear()
  t.equal((await request('check_ui')).status, 200, 'verified, no longer checking')
  t.same(eventOf(journaled).slice(-2), ['CHECK_STARTED', 'CHECK_PASSED'])
  await begin(image)
})

t.test('an install outcome the journal does not take is journaled before the next command', async (t) => {
  const { hal, journaled, refuse, request, begin, verified } = await setup(t)
  const image = await appImage(t)
  await verified(image)
  await hal.staging.discard('ui')
  refuse.add('INSTALL_FAILED')
  t.equal((await request('install_ui')).status, 503, 'the install failed, and so did its record')
  refuse.clear()
  await begin(image)
  t.same(eventOf(journaled).slice(-3), ['INSTALL_STARTED', 'INSTALL_FAILED', 'UPLOAD_STARTED'])
  t.match(
    journaled.filter((e) => e.type === LogType.UPGRADE),
    [{ result: LogResult.ERROR, data: { source: 406, kind: 'ui' } }],
    "the install's audit record came with it",
  )
})

t.test('an install that stands is 200 even if its staged copy cannot be discarded', async (t) => {
  const { hal, journaled, request, verified } = await setup(t)
  const image = await appImage(t)
  await verified(image)
  t.capture(hal.staging, 'discard', async () => {
    throw new Error('EIO')
  })
  t.equal((await request('install_ui')).status, 200)
  t.match(
    journaled.filter((e) => e.type === LogType.UPGRADE),
    [{ result: LogResult.OK, data: { source: 200, kind: 'ui', version: 'ui-1' } }],
  )
  t.ok(hal.webroot!.current(), 'the app is installed')
})
