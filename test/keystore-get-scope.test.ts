// A key's `get` checks its scope where the KID is known: a `keymgmt:use:<kid>` token reads that key
// and no other, however the command names the KID. Real bus, real HAL, scripted auth; commands sent
// with the gateway's bus credentials, as anything holding them could.
import t from 'tap'
import type { CommandRequest } from '../protocol/bus-messages.js'
import { KeystoreActor } from '../actors/keystore/keystore-actor.js'
import { LogType } from '../protocol/journal.js'
import { silentLogger } from './helpers/logger.js'
import { identity, scriptedBearer, scriptedIdentity } from './helpers/scripted-identity.js'

t.test('a keymgmt:use token reads only its own key, whether the KID is in the params or the body', async (t) => {
  const { hal, connect, journal, journaled, gatewayView } = await scriptedIdentity(t, 'E', identity(true))
  const keystore = await KeystoreActor.start({ nc: await connect('keystore'), hal, journal, logger: silentLogger })
  t.teardown(() => keystore.stop())
  const gateway = await gatewayView(['keystore'])
  let n = 0
  const ask = (op: string, req: Omit<CommandRequest, 'rid' | 'tls'>) =>
    gateway.request('keystore', op, { rid: `r-${++n}`, tls: true, ...req })
  const create = async (label: string) => {
    const reply = await ask('create', { bearer: scriptedBearer('U', 'keymgmt:gen'), body: { label, type: 'ED25519' } })
    return (reply.body as { kid: string }).kid
  }
  const own = await create('own')
  const victim = await create('victim')
  const use = scriptedBearer('U', `keymgmt:use:${own}`)

  t.equal((await ask('get', { bearer: use, params: { kid: own } })).status, 200, 'its own key, by the params')
  t.equal((await ask('get', { bearer: use, body: { kid: own } })).status, 200, 'its own key, by the body')
  t.equal(
    (await ask('get', { bearer: use, body: { kid: victim.toUpperCase() } })).status,
    403,
    'another key named in the body (in any case) is refused',
  )
  const refused = await ask('get', { bearer: use, body: { kid: victim } })
  t.match(refused, { status: 403, body: { error: 'forbidden' } })
  t.notOk(JSON.stringify(refused.body).includes('pubkey'), 'nothing of the key is answered')
  t.match(
    journaled.filter((e) => e.type === LogType.FAILED_SCOPE_CHECK).at(-1),
    { subject: 'U', data: { rid: `r-${n}`, scope: `keymgmt:use:${own}` } },
    'the refusal is journaled as FAILED_SCOPE_CHECK',
  )
  t.equal(
    (await ask('get', { bearer: use, params: { kid: victim } })).status,
    403,
    'another key by the params, as the guard refuses it',
  )
  t.equal((await ask('get', { bearer: use, params: { kid: 'xyz' } })).status, 403, 'a malformed KID: 403, as HTTP')
  t.equal((await ask('get', { bearer: use })).status, 403, 'no KID at all')

  const get = scriptedBearer('U', 'keymgmt:get')
  t.equal((await ask('get', { bearer: get, body: { kid: victim } })).status, 200, 'keymgmt:get reads any key')
  t.equal((await ask('get', { bearer: get, params: { kid: 'xyz' } })).status, 400, 'and is told a malformed KID')
})
