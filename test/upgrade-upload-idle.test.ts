// An upload that waits too long for its next chunk is dropped: a client that went away, or whose
// token expired mid-upload (it cannot even abort then), must not hold the pipeline in `receiving`,
// where every new upload is 409, until a reboot. Real bus and P HAL, the upgrade actor in process;
// the idle limit runs on the HAL's clock, which the test moves on.
import t, { type Test } from 'tap'
import { DEADLINE_MS } from '../protocol/deadlines.js'
import { LogType, type TransitionData } from '../protocol/journal.js'
import { manualClock } from './helpers/clock.js'
import { identity, refusingJournal, scriptedBearer, scriptedIdentity } from './helpers/scripted-identity.js'
import { until } from './helpers/until.js'
import { upgradeActorOn } from './helpers/upgrade-actor.js'

const IDLE_MS = 2 * DEADLINE_MS.long

async function setup(t: Test) {
  const clock = manualClock()
  const scripted = await scriptedIdentity(t, 'P', identity(true), { clock })
  const { journaled } = scripted
  let journaling = true
  const { gateway } = await upgradeActorOn(
    t,
    scripted,
    refusingJournal(scripted, () => !journaling),
  )
  let rids = 0
  const request = (op: string, body: Record<string, unknown>, bearer = scriptedBearer('U', 'system:config')) =>
    gateway.request('upgrade', op, { rid: `r${++rids}`, tls: true, bearer, body })
  const events = () =>
    journaled.filter((e) => e.type === LogType.TRANSITION).map((e) => (e.data as unknown as TransitionData).event)
  const state = () => gateway.readModel<{ ui: string }>('upgrade')?.ui
  return { clock, request, events, state, setJournaling: (on: boolean) => void (journaling = on) }
}

t.test('an upload without a chunk for the idle limit is dropped; each chunk restarts the limit', async (t) => {
  const { clock, request, events, state } = await setup(t)
  const begun = await request('upload_begin_ui', { size: 64 })
  const upload = (begun.body as { upload: string }).upload
  t.same(clock.armed(), [IDLE_MS], 'the upload arms its idle limit')
  clock.advance(IDLE_MS - 1)
  t.equal((await request('upload_chunk', { upload, offset: 0, data: Buffer.alloc(8) })).status, 200, 'not yet dropped')
  t.same(clock.armed(), [IDLE_MS], 'a chunk restarts it')
  clock.advance(IDLE_MS - 1)
  t.equal((await request('upload_chunk', { upload, offset: 8, data: Buffer.alloc(8) })).status, 200, 'from that chunk')

  // The token expires: neither a chunk nor an abort gets through; the limit still frees the pipeline.
  clock.advance(IDLE_MS / 2)
  const expired = scriptedBearer('U', 'system:config', Math.floor(Date.now() / 1000) - 60)
  t.equal((await request('upload_chunk', { upload, offset: 16, data: Buffer.alloc(8) }, expired)).status, 401)
  t.equal((await request('upload_abort', { upload }, expired)).status, 401)
  t.match(await request('upload_begin_ui', { size: 64 }), { status: 409 }, 'the pipeline is held')
  t.equal(state(), 'receiving')
  // Refused commands restart nothing: the limit ends as the last chunk's did.
  clock.advance(IDLE_MS / 2)
  await until('dropped', () => state() === 'idle')
  t.same(events(), ['UPLOAD_STARTED', 'UPLOAD_FAILED'], 'journaled as any dropped upload')
  t.same(clock.armed(), [], 'a dropped upload has no limit')
  t.equal((await request('upload_chunk', { upload, offset: 16, data: Buffer.alloc(8) })).status, 404)
  t.equal((await request('upload_begin_ui', { size: 64 })).status, 200, 'a new upload starts')
})

t.test('a drop the journal does not take is tried again after another idle limit', async (t) => {
  const { clock, request, events, state, setJournaling } = await setup(t)
  await request('upload_begin_ui', { size: 64 })
  setJournaling(false)
  clock.advance(IDLE_MS)
  await until('armed again', () => clock.armed().length === 1)
  t.equal(state(), 'receiving')
  setJournaling(true)
  clock.advance(IDLE_MS)
  await until('dropped', () => state() === 'idle')
  t.same(events(), ['UPLOAD_STARTED', 'UPLOAD_FAILED'])
})
