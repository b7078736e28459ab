// The key store checks its callers itself: a bearer token verified with the auth actor's public key,
// then role and scope. A principal the caller merely claims counts for nothing. Real bus, real HAL, scripted auth.
import t from 'tap'
import type { CommandRequest } from '../protocol/bus-messages.js'
import { keyOperationScopes } from '../protocol/key-scopes.js'
import { BEARER_HEADER } from '../protocol/bearer-token.js'
import { USER_ROLES } from '../protocol/scopes.js'
import { KeystoreActor } from '../actors/keystore/keystore-actor.js'
import { LogType } from '../protocol/journal.js'
import { routeTable } from '../gateway/routes.js'
import { silentLogger } from './helpers/logger.js'
import { identity, scriptedBearer, scriptedIdentity } from './helpers/scripted-identity.js'

t.test('only a verified token with the right scope and role reaches a key', async (t) => {
  const { hal, connect, journal, journaled, gatewayView } = await scriptedIdentity(t, 'E', identity(true))
  const keystore = await KeystoreActor.start({ nc: await connect('keystore'), hal, journal, logger: silentLogger })
  t.teardown(() => keystore.stop())
  const gateway = await gatewayView(['keystore'])
  const ask = (op: string, req: Omit<CommandRequest, 'rid' | 'tls'>) =>
    gateway.request('keystore', op, { rid: `r-${op}`, tls: true, ...req })
  const error = (reply: { body?: unknown }) => (reply.body as { error?: string }).error

  const created = await ask('create', {
    bearer: scriptedBearer('U', 'keymgmt:gen'),
    body: { label: 'k', type: 'AES256' },
  })
  t.equal(created.status, 200, 'a verified keymgmt:gen token creates a key')
  const kid = (created.body as { kid: string }).kid
  const encrypt = { raw: JSON.stringify({ alg: 'AES256-GCM', kid, msg: 'AAAA' }) }

  const claimed = await ask('encrypt', { principal: { sub: 'U', scope: `keymgmt:use:${kid}` }, body: encrypt })
  t.equal(claimed.status, 401, 'a claimed principal without a token is refused')
  t.equal(error(claimed), 'token_required')
  const forged = await ask('encrypt', {
    bearer: 'forged.U.keymgmt:use',
    principal: { sub: 'U', scope: `keymgmt:use:${kid}` },
    body: encrypt,
  })
  t.equal(forged.status, 401, 'a token the auth actor does not vouch for is refused, whatever principal comes with it')
  t.equal(error(forged), 'invalid_token')
  t.equal((await ask('list', {})).status, 401, 'no token: no list')

  const widened = await ask('encrypt', {
    bearer: scriptedBearer('U', 'keymgmt:list'),
    principal: { sub: 'U', scope: `keymgmt:use:${kid}` },
    body: encrypt,
  })
  t.equal(widened.status, 403, "the token's own scope counts, not the one claimed beside it")
  const refusal = journaled.find((e) => e.type === LogType.FAILED_SCOPE_CHECK && e.data?.rid === 'r-encrypt')
  t.equal(refusal?.data?.scope, 'keymgmt:list', 'the refusal is journaled with the verified scope')
  t.equal(
    (await ask('delete', { bearer: scriptedBearer('M', 'keymgmt:del'), params: { kid } })).status,
    403,
    'the master role never reaches keys',
  )

  const used = await ask('encrypt', { bearer: scriptedBearer('U', `keymgmt:use:${kid}`), body: encrypt })
  t.equal(used.status, 200, 'the right token encrypts')
  t.notOk(JSON.stringify(journaled).includes(BEARER_HEADER), 'no token reaches the journal')

  const anonymous = await ask('search', {
    principal: { sub: 'U', scope: 'keymgmt:search' },
    body: { descr: '^AAAAAAAA' },
  })
  t.equal(
    anonymous.status,
    401,
    "a search without a token is the search's to refuse (allow_keysearch is off), whatever principal is claimed",
  )
})

t.test("the gateway's key routes require exactly the scopes the key store checks", async (t) => {
  // The backup passphrase's route is the master's (operationAccess.backup), not a key operation's.
  const keyRoutes = routeTable.filter(
    (r) => r.handler.kind === 'command' && r.handler.service === 'keystore' && r.handler.op in keyOperationScopes,
  )
  t.ok(keyRoutes.length >= 9)
  for (const route of keyRoutes) {
    const op = (route.handler as { op: keyof typeof keyOperationScopes }).op
    t.same(route.scopes, keyOperationScopes[op], `${route.method} ${route.path}`)
    t.same(route.roles, USER_ROLES, `${route.path}: the roles the key store admits`)
  }
})
