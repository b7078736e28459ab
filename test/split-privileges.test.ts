// Privilege separation with --split: what the gateway's own bus credentials can reach
// (no key, no secret, no journal), and a crashed service restarted without losing what it acknowledged.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { NatsConnection } from '@nats-io/transport-node'
import t, { type Test } from 'tap'
import { decode, encode } from '../protocol/codec.js'
import { connectBus } from '../bus/connection.js'
import { Subjects } from '../protocol/subjects.js'
import type { CommandReply } from '../protocol/bus-messages.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'
import { api, b64, createKey } from './helpers/keys.js'
import { login, owned, type Owned } from './helpers/owner.js'
import { serviceProcesses } from './helpers/service-processes.js'
import { until } from './helpers/until.js'

/** The password the device gave a service's bus user, read from its nats-server configuration (mode 0600, this user's). */
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
  await until(`a refusal of ${subject}`, () => errors.length > 0, 10_000)
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

// One --split device for the three (each boot of one costs several seconds), in this order.
t.test('a --split device', async (t) => {
  const o = await owned(t, { boot: { split: true } })
  await t.test("the gateway's bus credentials reach no key, no secret and no journal", (t) => gatewayConfined(t, o))
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

  // What would carry secrets past it: the keystore's commands (plaintexts, imported keys) and the replies to other services.
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
