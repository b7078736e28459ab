// The keystore follows the auth actor's read model: keys serve a personalised device only, and
// `inited` turning false (a wipeout) erases the repository. Real bus, real HAL, scripted identity.
import t from 'tap'
import { KeystoreActor } from '../actors/keystore/keystore-actor.js'
import type { KeystoreState } from '../protocol/keystore-state.js'
import { silentLogger } from './helpers/logger.js'
import { identity, scriptedBearer, scriptedIdentity } from './helpers/scripted-identity.js'
import { until } from './helpers/until.js'

t.test('no key service before personalisation; a wipeout erases the repository', async (t) => {
  const { hal, connect, auth, journal, journaled, gatewayView } = await scriptedIdentity(t, 'E', identity(true))
  const keystore = await KeystoreActor.start({ nc: await connect('keystore'), hal, journal, logger: silentLogger })
  t.teardown(() => keystore.stop())
  const gateway = await gatewayView(['keystore'])
  const bearer = scriptedBearer('U', 'keymgmt:gen')

  const created = await gateway.request('keystore', 'create', {
    rid: 'r1',
    tls: true,
    bearer,
    body: { label: 'k', type: 'AES256' },
  })
  t.equal(created.status, 200)
  const kid = (created.body as { kid: string }).kid
  await until(
    'the read model counts the key',
    () => gateway.readModel<KeystoreState>('keystore')?.repo_stats.total === 1,
  )

  auth.publishState(identity(false))
  await until('the repository is erased', () => gateway.readModel<KeystoreState>('keystore')?.repo_stats.total === 0)
  const refused = await gateway.request('keystore', 'encrypt', {
    rid: 'r2',
    tls: true,
    bearer: scriptedBearer('U', `keymgmt:use:${kid}`),
    body: { raw: JSON.stringify({ alg: 'AES256-GCM', kid, msg: 'AAAA' }) },
  })
  t.equal(refused.status, 409, 'not personalised: 409')
  t.equal((refused.body as { error: string }).error, 'not_personalised')
  t.equal(
    (await gateway.request('keystore', 'list', { rid: 'r3', tls: true, bearer: scriptedBearer('U', 'keymgmt:list') }))
      .status,
    409,
  )
  t.notOk(
    journaled.some((e) => e.data?.rid === 'r2'),
    'a 409 is not journaled',
  )

  auth.publishState(identity(true))
  await until(
    'personalised again',
    async () =>
      (await gateway.request('keystore', 'list', { rid: 'r4', tls: true, bearer: scriptedBearer('U', 'keymgmt:list') }))
        .status === 200,
  )
  const list = await gateway.request('keystore', 'list', {
    rid: 'r5',
    tls: true,
    bearer: scriptedBearer('U', 'keymgmt:list'),
  })
  t.equal((list.body as { total: number }).total, 0, 'the new owner starts with no key')
})
