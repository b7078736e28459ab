// Privilege separation with --split: what the gateway's own bus credentials can reach (no key, no
// secret, no journal, no service acting for a principal it merely claims), and a crashed service
// restarted without losing what it acknowledged.
import { generateKeyPairSync, sign } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { NatsConnection } from '@nats-io/transport-node'
import t, { type Test } from 'tap'
import { decode, encode } from '../protocol/codec.js'
import { connectBus } from '../bus/connection.js'
import { Subjects } from '../protocol/subjects.js'
import type { CommandReply } from '../protocol/bus-messages.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { BEARER_HEADER } from '../protocol/bearer-token.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'
import { api, b64, createKey } from './helpers/keys.js'
import { login, owned, type Owned } from './helpers/owner.js'
import { call } from './helpers/http.js'
import { serviceProcesses } from './helpers/service-processes.js'
import { until } from './helpers/until.js'

/**
 * The password the device gave a service's bus user, read from its nats-server configuration (mode 0600, this user's).
 */
async function busPassword(dataDir: string, service: string): Promise<string> {
  const config = await readFile(join(dataDir, 'run', 'nats', 'nats-server.conf'), 'utf8')
  const user = new RegExp(`user: "${service}", password: "([^"]+)"`).exec(config)
  if (!user) throw new Error(`no bus user ${service}`)
  return user[1]!
}

async function connectAs(t: Test, o: Owned, service: string): Promise<NatsConnection> {
  const nc = await connectBus({
    servers: o.device.natsUrl,
    service,
    credentials: { user: service, pass: await busPassword(o.device.dataDir, service) },
  })
  t.teardown(() => nc.close())
  return nc
}

/** A subscription the server refuses reports a permissions violation to its callback. */
async function subscribeRefused(nc: NatsConnection, subject: string): Promise<string> {
  const errors: string[] = []
  nc.subscribe(subject, { callback: (err) => void (err && errors.push(err.message)) })
  await nc.flush()
  await until(`a refusal of ${subject}`, () => errors.length > 0)
  return errors[0]!
}

async function encryptOnce(o: Owned, token: string, kid: string): Promise<number> {
  return (
    await api(`${o.https}/api/crypto/cipher/encrypt`, token, {
      alg: 'AES256-GCM',
      kid,
      msg: b64(Buffer.from('sixty-four bytes, more or less')),
    })
  ).status
}

/** A token of the device's form and claims, signed with a key that is not the device's. */
function foreignToken(scope: string): string {
  const { privateKey } = generateKeyPairSync('ed25519')
  const now = Math.floor(Date.now() / 1000)
  const claims = { scope, sub: 'U', iat: now, exp: now + 3600, jti: 'foreign' }
  const input = `${BEARER_HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`
}

// One --split device for them all (each boot of one costs several seconds), in this order.
t.test('a --split device', async (t) => {
  const o = await owned(t, { variant: 'P', boot: { split: true } })
  await t.test("the gateway's bus credentials reach no key, no secret and no journal", (t) => gatewayConfined(t, o))
  await t.test('no service acts for a principal claimed with the gateway bus credentials', (t) => claimsRefused(t, o))
  await t.test('a crashed service is restarted by the supervisor with everything it acknowledged', (t) =>
    crashesSurvived(t, o),
  )
  await t.test('a service that keeps crashing stops the device (fail closed)', (t) => crashLoopStops(t, o))
})

async function gatewayConfined(t: Test, o: Owned): Promise<void> {
  const kid = await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'guarded', type: 'AES256' })
  const gateway = await connectAs(t, o, 'gateway')
  const subjects = new Subjects(o.device.devid)
  const ask = async (op: string, body: Record<string, unknown>) =>
    decode<CommandReply>(
      (
        await gateway.request(subjects.command('keystore', op), encode({ rid: `attack-${op}`, tls: true, ...body }), {
          timeout: 5_000,
        })
      ).data,
    )

  const claimed = await ask('encrypt', {
    principal: { sub: 'U', scope: `keymgmt:use:${kid}` },
    body: { raw: JSON.stringify({ alg: 'AES256-GCM', kid, msg: 'AAAA' }) },
  })
  t.equal(claimed.status, 401, 'claiming a principal on the bus encrypts nothing')
  const guessed = await ask('encrypt', {
    bearer: 'not.a.token',
    principal: { sub: 'U', scope: `keymgmt:use:${kid}` },
    body: { raw: JSON.stringify({ alg: 'AES256-GCM', kid, msg: 'AAAA' }) },
  })
  t.equal(guessed.status, 401, 'nor does a token the auth actor never minted')
  t.equal(
    (await ask('create', { principal: { sub: 'U', scope: 'keymgmt:gen' }, body: { label: 'x', type: 'AES256' } }))
      .status,
    401,
    'no key is made',
  )
  t.equal(
    (await ask('delete', { principal: { sub: 'U', scope: 'keymgmt:del' }, params: { kid } })).status,
    401,
    'none deleted',
  )
  t.equal(
    (await ask('get', { principal: { sub: 'U', scope: 'keymgmt:get' }, params: { kid } })).status,
    401,
    'none described',
  )

  // What would carry secrets past it: the keystore's commands (plaintexts, imported keys) and the replies to other
  // services.
  t.match(
    await subscribeRefused(gateway, subjects.commands('keystore')),
    /permission/i,
    "it cannot listen to the keystore's commands",
  )
  t.match(await subscribeRefused(gateway, '_INBOX_keystore.>'), /permission/i, "nor read the keystore's replies")
  t.match(await subscribeRefused(gateway, '_INBOX_auth.>'), /permission/i, "nor the auth actor's")
  t.match(await subscribeRefused(gateway, '>'), /permission/i, 'nor everything')
  await t.rejects(
    gateway.request(subjects.command('eventstore', 'append'), encode({ rid: 'forged', tls: false, body: [] }), {
      timeout: 1_000,
    }),
    'nor append to the journal',
  )

  const journal = await readJournal(o.device.dataDir)
  t.notOk(
    journal.records.some(
      (r) => String(r.decoded?.rid ?? '').startsWith('attack-') && r.type === LogType.CRYPTO_ENCRYPT,
    ),
    'no encrypt was journaled for the attempts',
  )
  t.equal(
    await encryptOnce(o, await login(o.base, `keymgmt:use:${kid}`), kid),
    200,
    "the owner's own token still works",
  )
}

/**
 * Every service that acts for a principal verifies the bearer token itself: with only the gateway's
 * bus credentials, a claimed principal gets nothing done, with no token, a garbage one, one signed by
 * another key, or one of the device's that has expired.
 */
async function claimsRefused(t: Test, o: Owned): Promise<void> {
  const kid = await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'claimed', type: 'AES256' })
  const logFile = (await api(`${o.base}/api/logger/list`, await login(o.base, 'logger:get'))).json.id[0] as string
  // The device's own token, asked to live two seconds: refused once the gateway says it has expired.
  const expired = await login(o.base, 'system:config', undefined, Math.floor(Date.now() / 1000) + 2)
  await until(
    'the short-lived token expired',
    async () => (await api(`${o.base}/api/system/config`, expired)).status === 401,
    30_000,
  )
  const gateway = await connectAs(t, o, 'gateway')
  const subjects = new Subjects(o.device.devid)
  const commands: [service: string, op: string, scope: string, request: Record<string, unknown>][] = [
    ['auth', 'config_get', 'system:config', {}],
    ['auth', 'config_set', 'system:config', { body: { email: 'mallory@example.com' } }],
    [
      'auth',
      'config_set',
      'system:config',
      {
        body: {
          userkey: b64(Buffer.alloc(32, 9)),
          userkey_nonce: b64(Buffer.alloc(32)),
          userkey_hmac: b64(Buffer.alloc(32)),
        },
      },
    ],
    ['auth', 'denied', 'system:config', { body: { method: 'GET', path: '/api/forged' } }],
    ['storage', 'unlock_rw', 'storage:disk1:rw', {}],
    ['storage', 'unlock', 'storage:disk1', {}],
    ['keystore', 'list', 'keymgmt:list', {}],
    [
      'keystore',
      'encrypt',
      `keymgmt:use:${kid}`,
      { body: { raw: JSON.stringify({ alg: 'AES256-GCM', kid, msg: 'AAAA' }) } },
    ],
    ['logger', 'list', 'logger:get', {}],
    ['logger', 'read', 'logger:get', { params: { id: logFile } }],
    ['upgrade', 'install_fw', 'system:upgrade', {}],
    ['upgrade', 'check_fw', 'system:upgrade', {}],
    ['system', 'selftest', 'system:config', {}],
    ['system', 'reboot', 'system:config', {}],
  ]
  const bearers: [what: string, bearer: string | undefined, error: string][] = [
    ['no token', undefined, 'token_required'],
    ['a garbage token', 'not.a.token', 'invalid_token'],
    [
      'a forged token of the right form',
      `${BEARER_HEADER}.${Buffer.from('{}').toString('base64url')}.${'A'.repeat(86)}`,
      'invalid_token',
    ],
    ['a token signed by another key', undefined, 'invalid_token'],
    ["the device's own token, expired", expired, 'invalid_token'],
  ]
  let n = 0
  for (const [what, fixed, error] of bearers) {
    for (const [service, op, scope, request] of commands) {
      const bearer = what === 'a token signed by another key' ? foreignToken(scope) : fixed
      const envelope = {
        rid: `claimed-${++n}`,
        tls: true,
        principal: { sub: 'U', scope },
        ...(bearer !== undefined ? { bearer } : {}),
        ...request,
      }
      const reply = decode<CommandReply>(
        (await gateway.request(subjects.command(service, op), encode(envelope), { timeout: 10_000 })).data,
      )
      t.equal(reply.status, 401, `${service}.${op}, ${what}: 401`)
      t.equal((reply.body as { error?: string } | undefined)?.error, error)
    }
  }

  const config = await api(`${o.base}/api/system/config`, await login(o.base, 'system:config'))
  t.equal(config.json.email, 'ada@example.com', 'the configuration is unchanged')
  t.equal((await call(`${o.base}/api/system/status`)).json.storage?.[1]?.endsWith(':-'), true, 'Disk 1 is still locked')
  const { records } = await readJournal(o.device.dataDir)
  t.same(
    records.filter((r) => String(r.decoded?.rid ?? '').startsWith('claimed-')),
    [],
    'nothing was journaled for them: no config change, no read, no forged scope failure',
  )
  t.equal(await login(o.base, 'system:config').then(Boolean), true, "the owner's passphrase still logs in")
}

async function crashesSurvived(t: Test, o: Owned): Promise<void> {
  const kid = await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'survivor', type: 'AES256' })
  const use = await login(o.base, `keymgmt:use:${kid}`)
  t.equal(await encryptOnce(o, use, kid), 200)

  let token = use
  for (const service of ['keystore', 'eventstore', 'auth', 'gateway'] as const) {
    const before = serviceProcesses().get(service)!
    process.kill(before, 'SIGKILL')
    await until(
      `${service} restarted`,
      () => {
        const now = serviceProcesses().get(service)
        return now !== undefined && now !== before
      },
      30_000,
    )
    // A restarted auth actor has a new token key: tokens die with it, as at a reboot.
    if (service === 'auth')
      await until('a login again', async () => Boolean((token = await login(o.base, `keymgmt:use:${kid}`))), 30_000)
    await until(`encrypt after ${service} restarted`, async () => (await encryptOnce(o, token, kid)) === 200, 30_000)
    t.equal(await encryptOnce(o, token, kid), 200, `${service} came back, on the same address, with the key`)
  }
  const gen = await login(o.base, 'keymgmt:list')
  const list = await api(`${o.https}/api/keymgmt/list`, gen)
  t.equal(list.status, 200)
  t.match(JSON.stringify(list.json), kid, 'the key acknowledged before the crashes is listed')

  const { records } = await readJournal(o.device.dataDir)
  t.ok(
    records.some((r) => r.type === LogType.KEY_GENERATION && r.decoded?.kid === kid),
    'its creation is journaled',
  )
  t.ok(
    records.filter((r) => r.type === LogType.CRYPTO_ENCRYPT && r.result === LogResult.OK).length >= 5,
    'every acknowledged encrypt is journaled',
  )
  t.equal(
    (await verifyDataDir(o.device.dataDir, o.device.logPublicKey, true)).ok,
    true,
    'the journal of the crashes verifies',
  )
}

async function crashLoopStops(t: Test, o: Owned): Promise<void> {
  let stopped = false
  void o.device.stopped.then(() => (stopped = true))
  // The keystore crashed once already above (inside the same minute): at most four more.
  for (let crash = 1; !stopped && crash <= 5; crash++) {
    let pid: number | undefined
    await until(
      'a keystore process, or the device stopping',
      () => stopped || (pid = serviceProcesses().get('keystore')) !== undefined,
      30_000,
    )
    if (pid === undefined) break
    process.kill(pid, 'SIGKILL')
    await until('the crash seen', () => stopped || serviceProcesses().get('keystore') !== pid, 30_000)
  }
  await until('the device stopped', () => stopped, 30_000)
  t.same([...serviceProcesses().keys()], [], 'no service process is left')
  t.equal(o.device.fault, 'the keystore service kept crashing', 'the device says why it stopped (hemd exits 1 on it)')
}
