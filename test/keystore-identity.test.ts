// The keystore follows the auth actor's read model: keys serve a personalised device only, and
// `inited` turning false (a wipeout) erases the repository. Real bus, real HAL, scripted identity.
import t from 'tap'
import type { IdentityState } from '../actors/auth/identity-state.js'
import { connectBus } from '../actors/bus/connection.js'
import { ReadModelBus } from '../actors/bus/read-model-bus.js'
import { ServiceHost } from '../actors/bus/service-host.js'
import { inboxPrefix } from '../actors/bus/services.js'
import type { JournalPort } from '../actors/host/journal-port.js'
import { KeystoreActor } from '../actors/keystore/keystore-actor.js'
import type { KeystoreState } from '../actors/keystore/types.js'
import { startOwnBus } from '../actors/supervisor/bus-setup.js'
import type { JournalEntry } from '../eventstore/index.js'
import { openHal } from '../hal/index.js'
import { builtFirmware } from './helpers/device.js'
import { silentLogger } from './helpers/logger.js'
import { until } from './helpers/until.js'

function identity(inited: boolean): IdentityState {
  return { boot: 'b', inited, ctx: 0, trusted_ts: true, allow_keysearch: false, transport: { hostname: '', origin: '*', hsts: false, dosprot: 0 }, intact: true }
}

t.test('no key service before personalisation; a wipeout erases the repository', async (t) => {
  const dir = t.testdir({ data: {}, run: {} })
  const hal = await openHal({ variant: 'E', dataDir: `${dir}/data`, firmware: await builtFirmware() })
  t.teardown(() => hal.close())
  const bus = await startOwnBus({ devid: hal.devid, runDir: `${dir}/run` })
  t.teardown(() => bus.server.stop())
  const connect = async (service: string) => {
    const nc = await connectBus({ servers: bus.url, service, credentials: bus.credentials.get(service)! })
    t.teardown(() => nc.close())
    return nc
  }
  const auth = new ServiceHost<IdentityState>(await connect('auth'), hal.devid, 'auth', {}, silentLogger)
  auth.start()
  auth.publishState(identity(true))
  const journaled: JournalEntry[] = []
  const journal: JournalPort = {
    append: async (entries) => (journaled.push(...entries), entries.map((_, seq) => ({ file: '00000000', seq }))),
    status: async () => ({ fileId: '00000000', intact: true }),
  }
  const keystore = await KeystoreActor.start({ nc: await connect('keystore'), hal, journal, logger: silentLogger })
  t.teardown(() => keystore.stop())
  const gateway = new ReadModelBus({ nc: await connect('gateway'), devid: hal.devid, services: ['keystore'], inboxPrefix: inboxPrefix('gateway'), logger: silentLogger })
  t.teardown(() => gateway.close())
  const principal = { sub: 'U', scope: 'keymgmt:gen' }

  const created = await gateway.request('keystore', 'create', { rid: 'r1', tls: true, principal, body: { label: 'k', type: 'AES256' } })
  t.equal(created.status, 200)
  const kid = (created.body as { kid: string }).kid
  await until('the read model counts the key', () => gateway.readModel<KeystoreState>('keystore')?.repo_stats.total === 1)

  auth.publishState(identity(false))
  await until('the repository is erased', () => gateway.readModel<KeystoreState>('keystore')?.repo_stats.total === 0)
  const refused = await gateway.request('keystore', 'encrypt', {
    rid: 'r2',
    tls: true,
    principal: { sub: 'U', scope: `keymgmt:use:${kid}` },
    body: { raw: JSON.stringify({ alg: 'AES256-GCM', kid, msg: 'AAAA' }) },
  })
  t.equal(refused.status, 409, 'not personalised: 409')
  t.equal((refused.body as { error: string }).error, 'not_personalised')
  t.equal((await gateway.request('keystore', 'list', { rid: 'r3', tls: true, principal: { sub: 'U', scope: 'keymgmt:list' } })).status, 409)
  t.notOk(journaled.some((e) => e.data?.rid === 'r2'), 'a 409 is not journaled')

  auth.publishState(identity(true))
  await until('personalised again', async () => (await gateway.request('keystore', 'list', { rid: 'r4', tls: true, principal: { sub: 'U', scope: 'keymgmt:list' } })).status === 200)
  const list = await gateway.request('keystore', 'list', { rid: 'r5', tls: true, principal: { sub: 'U', scope: 'keymgmt:list' } })
  t.equal((list.body as { total: number }).total, 0, 'the new owner starts with no key')
})
