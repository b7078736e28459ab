// The upgrade machine decides: an operation whose event the machine cannot take in its state is
// answered with the contract's status and journals no transition (an install's refusal keeps its
// UPGRADE audit record, as the contract asks). Real bus and P HAL, the upgrade actor in process.
import t, { type Test } from 'tap'
import { UpgradeActor } from '../actors/upgrade/upgrade-actor.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { silentLogger } from './helpers/logger.js'
import { followReadModels } from '../bus/index.js'
import { identity, scriptedBearer, scriptedIdentity } from './helpers/scripted-identity.js'

async function setup(t: Test) {
  const { hal, connect, journal, journaled, gatewayView } = await scriptedIdentity(t, 'P', identity(true))
  const upgrade = new UpgradeActor({ nc: await connect('upgrade'), hal, journal, logger: silentLogger })
  await upgrade.start()
  t.teardown(() => upgrade.stop())
  const gateway = await gatewayView(['upgrade'])
  await gateway.whenReady()
  // Only the supervisor confirms a trial boot (the gateway's bus user may not ask it to).
  const supervisor = followReadModels(await connect('supervisor'), hal.devid, 'supervisor', [], silentLogger)
  t.teardown(() => supervisor.close())
  const bearer = scriptedBearer('U', 'system:config')
  let rids = 0
  const request = (op: string, body: Record<string, unknown> = {}) =>
    (op === 'confirm' ? supervisor : gateway).request('upgrade', op, { rid: `r${++rids}`, tls: true, bearer, body })
  const transitions = () => journaled.filter((e) => e.type === LogType.TRANSITION)
  return { request, journaled, transitions }
}

t.test('nothing uploaded: check 404, install 406 (audited), confirm 409; no transition', async (t) => {
  const { request, journaled, transitions } = await setup(t)
  t.match(await request('check_fw'), { status: 404, body: { error: 'not_uploaded' } })
  t.same(journaled, [], 'a refused check journals nothing')

  t.match(await request('install_ui'), { status: 406, body: { error: 'not_verified' } })
  t.match(journaled, [{ type: LogType.UPGRADE, result: LogResult.ERROR, data: { source: 406, kind: 'ui' } }])
  t.same(transitions(), [], 'the refused install moved no machine')

  t.match(await request('confirm'), { status: 409, body: { error: 'no_trial' } })
  t.equal(journaled.length, 1, 'a boot that is no trial confirms nothing and journals nothing')
})

t.test('an upload running: a second start is refused (409 busy) and journals nothing', async (t) => {
  const { request, journaled, transitions } = await setup(t)
  const begun = await request('upload_begin_fw', { size: 64 })
  t.equal(begun.status, 200)
  t.match(transitions(), [{ data: { machine: 'upgrade', instance: 'fw', from: 'idle', to: 'receiving' } }])
  const before = journaled.length

  t.match(await request('upload_begin_fw', { size: 64 }), { status: 409, body: { error: 'busy' } })
  t.match(await request('install_fw'), { status: 406, body: { error: 'not_verified' } }, 'receiving takes no install')
  t.match(await request('check_fw'), { status: 404, body: { error: 'not_uploaded' } }, 'nor a check')
  t.same(
    journaled.slice(before).map((e) => e.type),
    [LogType.UPGRADE],
    "only the install's audit record: no transition for any refusal",
  )
  t.match(await request('upload_begin_ui', { size: 64 }), { status: 200 }, 'the other pipeline is its own machine')
})
