// hem-authenticator on the command line against the fake broker: the automatic mode's pairing and its
// decisions in order (then the last repeated), pair / pairings / unpair with consent, approve's questions.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { httpsTransport } from '../cli/hem-authenticator/https-transport.js'
import { FakeBroker, FakeDevice } from './helpers/authenticator-fake-broker.js'
import { runAuthenticator } from './helpers/authenticator-cli.js'
import { writeSelfSignedCert } from './helpers/self-signed-cert.js'
import { until } from './helpers/until.js'

const env = { HEM_AUTHENTICATOR_PASSPHRASE: 'test passphrase' }

async function brokerFor(t: { teardown(fn: () => unknown): void }): Promise<FakeBroker> {
  const broker = await new FakeBroker().start()
  t.teardown(() => broker.stop())
  return broker
}

t.test('auto: pairs the pending registration, then allow, deny, and deny again for the third', async (t) => {
  const broker = await brokerFor(t)
  const device = new FakeDevice()
  const other = new FakeDevice()
  const eid = Buffer.from(device.eid).toString('base64')
  broker.register(other)
  broker.register(device)
  const run = runAuthenticator(['auto', '--cloud', broker.base, '--decide', 'allow,deny', '--eid', eid])
  t.teardown(() => run.stop())
  await until('paired', () => broker.subscribers.size === 1, 30_000)
  const [pid] = [...broker.subscribers.keys()]
  t.equal(broker.subscribers.get(pid!)?.eid, eid, 'only the device --eid names')
  const states: string[] = []
  for (const scope of ['system:config', 'keymgmt:list', 'logger:list']) {
    const { eventId } = broker.event(device, scope, [pid!])
    await until(`event ${scope} answered`, () => broker.events.get(eventId)?.state !== 'pending', 30_000)
    states.push(broker.events.get(eventId)!.state)
  }
  t.same(states, ['allowed', 'denied', 'denied'])
  run.stop()
  t.equal(await run.done, 0)
  const out = run.stdout()
  t.match(out, `paired ${pid} with device ${eid}`)
  t.match(out, /allowed [0-9a-f]{64}: system:config for 900 s\n/)
  t.equal(out.match(/^denied /gm)?.length, 2)
  t.notMatch(out, /eyJ/, 'no JWT (reply, authreply) printed')
  t.match(out, /auto: stopped\n$/)
})

t.test('auto pairs the same device again, and answers an event it gets twice only once', async (t) => {
  const broker = await brokerFor(t)
  const device = new FakeDevice()
  const run = runAuthenticator(['auto', '--cloud', broker.base, '--decide', 'deny,allow', '--period', '3600'])
  t.teardown(() => run.stop())
  broker.register(device)
  await until('paired once', () => broker.subscribers.size === 1, 30_000)
  broker.register(device)
  await until('paired twice', () => broker.subscribers.size === 2, 30_000)
  const { eventId } = broker.event(device, 'system:config', [...broker.subscribers.keys()])
  await until('answered', () => broker.events.get(eventId)?.state !== 'pending', 30_000)
  t.equal(broker.events.get(eventId)?.state, 'denied', 'the first decision, once')
  const second = broker.event(device, 'system:config', [...broker.subscribers.keys()])
  await until('answered', () => broker.events.get(second.eventId)?.state !== 'pending', 30_000)
  t.equal(broker.events.get(second.eventId)?.state, 'allowed', 'the second decision for the second event')
  const { claims } = device.openAuthreply(
    broker.events.get(second.eventId)!.answer!.authreply!,
    new Uint8Array(Buffer.from(broker.subscribers.get(broker.events.get(second.eventId)!.answer!.pid)!.aid, 'base64')),
    second.jti,
  )
  t.equal((claims.exp as number) - (claims.iat as number), 3600, '--period')
})

t.test("auto --ca trusts the cloud's CA over TLS 1.3; without it the certificate is refused", async (t) => {
  const dir = t.testdir()
  const [cert, key] = [join(dir, 'cloud.crt'), join(dir, 'cloud.key')]
  writeSelfSignedCert('localhost', cert, key)
  const broker = await new FakeBroker().start({ cert: await readFile(cert, 'utf8'), key: await readFile(key, 'utf8') })
  t.teardown(() => broker.stop())
  const { rid } = broker.register(new FakeDevice())
  const run = runAuthenticator(['auto', '--cloud', broker.base, '--decide', 'allow', '--ca', cert])
  t.teardown(() => run.stop())
  await until('paired over https', () => broker.registrations.get(rid)?.state === 'replied', 30_000)
  run.stop()
  t.equal(await run.done, 0)
  const untrusted = await httpsTransport()('GET', `${broker.base}/notify/register/pending`).catch((err: Error) => err)
  t.match(untrusted, { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }, 'the system CAs do not vouch for it')
})

t.test('auto refuses bad options', async (t) => {
  for (const [args, message] of [
    [['auto', '--decide', 'allow'], /--cloud is required/],
    [['auto', '--cloud', 'http://203.0.113.1', '--decide', 'allow'], /must be https/],
    [['auto', '--cloud', 'https://x.example', '--decide', 'allow,maybe'], /'maybe' is neither/],
    [['auto', '--cloud', 'https://x.example', '--decide', 'allow', '--period', '600'], /--period must be/],
  ] as const) {
    const run = runAuthenticator([...args])
    t.equal(await run.done, 2, args.join(' '))
    t.match(run.stderr(), message)
  }
})

t.test('the auto process stops on SIGTERM with status 0', async (t) => {
  const broker = await brokerFor(t)
  const bin = fileURLToPath(new URL('../dist/bin/hem-authenticator.js', import.meta.url))
  const child = spawn(process.execPath, [bin, 'auto', '--cloud', broker.base, '--decide', 'allow'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => child.kill('SIGKILL'))
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  await until('polling', () => broker.requests.includes('GET /notify/register/pending'), 30_000)
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0)
  t.match(out, /auto: stopped\n$/)
})

t.test('pair with consent, list, unpair', async (t) => {
  const broker = await brokerFor(t)
  const device = new FakeDevice()
  const store = join(t.testdir(), 'pairings.json')
  const { link } = broker.register(device)
  const qr = JSON.stringify({
    link,
    hash: 'not_implemented_yet',
    user: 'alice',
    email: 'a@x.example',
    hostname: 'my.ence.do',
  })
  const pair = runAuthenticator(['pair', qr, '--store', store], { env, answers: ['y'] })
  t.equal(await pair.done, 0, pair.stderr())
  t.match(pair.stdout(), /device: +my\.ence\.do\nuser: +alice\ne-mail: +a@x\.example\nfrom: +192\.0\.2\.5\n/)
  t.match(pair.stdout(), 'Pair with this device? [y/N]')
  const [pid] = [...broker.subscribers.keys()]
  t.match(pair.stdout(), `paired: pid ${pid}`)
  const list = runAuthenticator(['pairings', '--store', store], { env })
  t.equal(await list.done, 0)
  t.match(list.stdout(), `${pid}  eid ${Buffer.from(device.eid).toString('base64')}  alice@my.ence.do  ${broker.base}`)
  const wrong = runAuthenticator(['pairings', '--store', store], { env: { HEM_AUTHENTICATOR_PASSPHRASE: 'no' } })
  t.equal(await wrong.done, 1)
  t.match(wrong.stderr(), 'the passphrase does not open the pairing store')
  const unpair = runAuthenticator(['unpair', pid!, '--store', store], { env })
  t.equal(await unpair.done, 0, unpair.stderr())
  t.match(unpair.stdout(), 'delete its key on the device too')
  t.notOk(broker.subscribers.has(pid!))
  const empty = runAuthenticator(['pairings', '--store', store], { env })
  await empty.done
  t.equal(empty.stdout(), 'no pairings\n')
})

t.test('pair refused by the user: the registration is deleted, nothing stored', async (t) => {
  const broker = await brokerFor(t)
  const store = join(t.testdir(), 'pairings.json')
  const { rid, link } = broker.register(new FakeDevice())
  const pair = runAuthenticator(['pair', link, '--store', store], { env, answers: ['n'] })
  t.equal(await pair.done, 1)
  t.equal(broker.registrations.get(rid)?.state, 'refused')
  t.equal(broker.subscribers.size, 0)
  const noTerminal = runAuthenticator(['pair', broker.register(new FakeDevice()).link, '--store', store], { env })
  t.equal(await noTerminal.done, 2)
  t.match(noTerminal.stderr(), 'give --yes')
})

t.test('approve asks allow, the period and the write switch; deny for the next', async (t) => {
  const broker = await brokerFor(t)
  const device = new FakeDevice()
  const store = join(t.testdir(), 'pairings.json')
  const pair = runAuthenticator(['pair', broker.register(device).link, '--yes', '--store', store], { env })
  t.equal(await pair.done, 0, pair.stderr())
  const [pid] = [...broker.subscribers.keys()]
  const first = broker.event(device, 'storage:disk0:rw', [pid!])
  const approve = runAuthenticator(['approve', '--once', '--store', store], { env, answers: ['y', '2', 'n'] })
  t.equal(await approve.done, 0, approve.stderr())
  t.match(approve.stdout(), /scope: +storage:disk0:rw\n +requester: +198\.51\.100\.9\n/)
  t.match(approve.stdout(), 'Write access? [Y/n]')
  const answer = broker.events.get(first.eventId)!.answer!
  const aid = new Uint8Array(Buffer.from(broker.subscribers.get(pid!)!.aid, 'base64'))
  const opened = device.openAuthreply(answer.authreply!, aid, first.jti)
  t.equal(opened.scope, 'storage:disk0', 'write access removed')
  t.equal((opened.claims.exp as number) - (opened.claims.iat as number), 3600)
  const second = broker.event(device, 'system:config', [pid!])
  const deny = runAuthenticator(['approve', '--once', '--store', store], { env, answers: ['n'] })
  t.equal(await deny.done, 0)
  t.equal(broker.events.get(second.eventId)?.state, 'denied')
  t.match(deny.stdout(), `denied ${second.eventId}`)
  const hint = Buffer.from(JSON.stringify({ t: '0221', l: 'PGP main' })).toString('base64')
  broker.event(device, `keymgmt:use:${'ab'.repeat(16)}#${hint}`, [pid!])
  const named = runAuthenticator(['approve', '--once', '--store', store], { env, answers: ['n'] })
  t.equal(await named.done, 0)
  t.match(named.stdout(), `scope:     keymgmt:use:${'ab'.repeat(16)}\n  key:       PGP main (type 0221)\n`)
})
