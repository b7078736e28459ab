import t, { type Test } from 'tap'
import type { NatsConnection } from '@nats-io/transport-node'
import { type ChildProcess, spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { once } from 'node:events'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { connectBus } from '../bus/connection.js'
import { decode, encode } from '../protocol/codec.js'
import { BusUnavailableError } from '../bus/errors.js'
import { ReadModelBus } from '../bus/read-model-bus.js'
import { followReadModels } from '../bus/follow-read-models.js'
import { ServiceHost } from '../bus/service-host.js'
import { Subjects } from '../protocol/subjects.js'
import type { StateEvent } from '../protocol/bus-messages.js'
import { VERIFY_RECORDS_OP } from '../protocol/diag.js'
import { EXT_PAIR_OP, EXT_PAIRINGS_OP } from '../protocol/ext-pairing-ops.js'
import { inboxPrefix, services } from '../bus/services.js'
import { gatewayProjections } from '../gateway/device-view.js'
import { startOwnBus } from '../bus/bus-setup.js'
import { NatsServer } from '../bus/nats-server.js'
import { isProcessAlive } from '../hal/sim/process-alive.js'
import { silentLogger } from './helpers/logger.js'
import { until } from './helpers/until.js'
import { startTcpProxy } from './helpers/tcp-proxy.js'
import { distDir } from './helpers/device.js'

const devid = '00112233aabbccdd'
const subjects = new Subjects(devid)

async function ownBus(t: Test) {
  const bus = await startOwnBus({ devid, runDir: t.testdir() })
  t.teardown(() => bus.server.stop())
  const connect = async (service: string) => {
    const nc = await connectBus({ servers: bus.url, service, credentials: bus.credentials.get(service)! })
    t.teardown(() => nc.close())
    return nc
  }
  return { bus, connect }
}

/** `service`'s host on `nc` with `operations`, started, stopped when the test ends. */
function serve<S>(
  t: Test,
  nc: NatsConnection,
  service: string,
  operations: ConstructorParameters<typeof ServiceHost>[3],
) {
  const host = new ServiceHost<S>(nc, devid, service, operations, silentLogger)
  host.start()
  t.teardown(() => host.stop())
  return host
}

t.test('subjects are scoped to the device and validated', async (t) => {
  t.equal(subjects.command('system', 'state'), 'hem.00112233aabbccdd.cmd.system.state')
  t.equal(subjects.events(), 'hem.00112233aabbccdd.evt.>')
  t.throws(() => new Subjects('not-hex'), TypeError)
})

t.test('codec round-trips maps without shared records', async (t) => {
  const value = { a: 1, b: [1, 2], c: new Uint8Array([1, 2, 3]), d: { e: 'x' } }
  t.same(decode(encode(value)), value)
  t.same(decode(encode(value)), decode(encode(structuredClone(value))))
})

t.test('a command round trip, state projection, and exclusive ordering', async (t) => {
  const { connect } = await ownBus(t)
  const order: number[] = []
  const host = new ServiceHost<{ n: number }>(
    await connect('storage'),
    devid,
    'storage',
    {
      echo: {
        handler: async (req) => {
          const n = (req.body as { n: number }).n
          await sleep(n === 1 ? 30 : 0)
          order.push(n)
          return { status: 200, body: { n, rid: req.rid } }
        },
      },
      boom: {
        handler: () => {
          throw new Error('secret detail')
        },
      },
    },
    silentLogger,
  )
  host.start()
  t.teardown(() => host.stop())
  const gateway = await connect('gateway')
  const reads = new ReadModelBus({
    nc: gateway,
    devid,
    services: ['storage'],
    inboxPrefix: inboxPrefix('gateway'),
    logger: silentLogger,
  })
  t.teardown(() => reads.close())
  t.equal(reads.readModel('storage'), undefined, 'nothing known before the actor publishes')
  host.publishState({ n: 1 })
  await until('state n = 1', () => reads.readModel<{ n: number }>('storage')?.n === 1)
  host.publishState({ n: 2 })
  await until('state n = 2', () => reads.readModel<{ n: number }>('storage')?.n === 2)

  const replies = await Promise.all(
    [1, 2].map((n) => reads.request('storage', 'echo', { rid: `r${n}`, tls: false, body: { n } })),
  )
  t.same(
    replies.map((r) => r.body),
    [
      { n: 1, rid: 'r1' },
      { n: 2, rid: 'r2' },
    ],
  )
  t.same(order, [1, 2], 'exclusive operations run in arrival order')

  const failed = await reads.request('storage', 'boom', { rid: 'x', tls: false })
  t.equal(failed.status, 500)
  t.notMatch(JSON.stringify(failed.body), /secret detail/, 'internal errors do not leak')
  const unknown = await reads.request('storage', 'nope', { rid: 'x', tls: false })
  t.equal(unknown.status, 404)
  await t.rejects(reads.request('eventstore', 'append', { rid: 'x', tls: false }, 500), BusUnavailableError)
})

t.test('permissions: each service only where the table lets it', async (t) => {
  const { connect } = await ownBus(t)
  const journalNc = await connect('eventstore')
  serve(t, journalNc, 'eventstore', { append: { handler: () => ({ status: 200, body: 'appended' }) } })
  const system = await connect('system')
  await journalNc.flush()
  const ok = decode<{ status: number }>(
    (await system.request(subjects.command('eventstore', 'append'), encode({ rid: 'a', tls: false }))).data,
  )
  t.equal(ok.status, 200, 'the system actor may append to the journal')

  const gateway = await connect('gateway')
  await t.rejects(
    gateway.request(subjects.command('eventstore', 'append'), encode({ rid: 'a', tls: false }), { timeout: 1000 }),
    'the gateway may not append to the journal',
  )
  const errors: string[] = []
  gateway.subscribe(subjects.commands('system'), {
    callback: (err) => {
      if (err) errors.push(err.message)
    },
  })
  await gateway.flush()
  await until('a subscription error', () => errors.length > 0)
  t.match(errors[0], /permission/i, 'the gateway may not answer commands')

  serve(t, system, 'system', {
    selftest: { handler: () => ({ status: 200 }) },
    checkin: { handler: () => ({ status: 200 }) },
  })
  // The server must have its subscriptions before the gateway asks (else: no responders).
  await system.flush()
  t.equal(
    decode<{ status: number }>(
      (await gateway.request(subjects.command('system', 'selftest'), encode({ rid: 's', tls: false }))).data,
    ).status,
    200,
    'the gateway may run a selftest',
  )
  await t.rejects(
    gateway.request(subjects.command('system', 'checkin'), encode({ rid: 'c', tls: false }), { timeout: 1000 }),
    'but not order what only a verified check-in may',
  )
  await t.rejects(
    gateway.request(subjects.command('system', 'sim'), encode({ rid: 'c', tls: false }), { timeout: 1000 }),
    "nor the simulator's fault injection",
  )

  // The keystore checks its records for the system's self-test without a token: not for the gateway.
  const keystore = await connect('keystore')
  serve(t, keystore, 'keystore', {
    list: { handler: () => ({ status: 200 }) },
    [VERIFY_RECORDS_OP]: { handler: () => ({ status: 200 }) },
    [EXT_PAIR_OP]: { handler: () => ({ status: 200 }) },
    [EXT_PAIRINGS_OP]: { handler: () => ({ status: 200 }) },
  })
  await keystore.flush()
  t.equal(
    decode<{ status: number }>((await gateway.request(subjects.command('keystore', 'list'), encode({ rid: 'l' }))).data)
      .status,
    200,
    'the gateway may send the keystore its operations',
  )
  await t.rejects(
    gateway.request(subjects.command('keystore', VERIFY_RECORDS_OP), encode({ rid: 'v', tls: false }), {
      timeout: 1000,
    }),
    'but not the check of every key record',
  )
  t.equal(
    decode<{ status: number }>(
      (await system.request(subjects.command('keystore', VERIFY_RECORDS_OP), encode({ rid: 'v', tls: false }))).data,
    ).status,
    200,
    'which the system may ask for',
  )

  // The pairings of external authenticators are the auth service's, which checks the phone's signature first.
  const pairingAuth = await connect('auth')
  for (const op of [EXT_PAIR_OP, EXT_PAIRINGS_OP]) {
    await t.rejects(
      gateway.request(subjects.command('keystore', op), encode({ rid: 'p', tls: false }), { timeout: 1000 }),
      `the gateway may not send ${op}`,
    )
    const answer = await pairingAuth.request(subjects.command('keystore', op), encode({ rid: 'p', tls: false }))
    t.equal(decode<{ status: number }>(answer.data).status, 200, `the auth service may send ${op}`)
  }

  // The system takes a check-in order without a token: only auth, which verified the check-in, may give it.
  const upgrade = await connect('upgrade')
  const state = decode<StateEvent>((await upgrade.request(subjects.command('system', 'state'), encode({}))).data)
  t.equal(state.service, 'system', "the upgrade service reads the system's state")
  await t.rejects(
    upgrade.request(subjects.command('system', 'checkin'), encode({ rid: 'c', tls: false }), { timeout: 1000 }),
    'but may not order what only a verified check-in may',
  )
})

t.test('only auth may send a check-in order', async (t) => {
  const allowed = services.filter((spec) => spec.calls.some((call) => call === 'system' || call === 'system.checkin'))
  t.same(
    allowed.map((spec) => spec.name),
    ['auth'],
  )
})

t.test('the gateway reads the state events its projections render, and no others', async (t) => {
  const gateway = services.find((s) => s.name === 'gateway')!
  t.same([...gateway.listens].sort(), [...gatewayProjections].sort())
})

t.test('the bus down: commands and reads refused, then everything recovers', async (t) => {
  const { bus, connect } = await ownBus(t)
  const host = serve<{ v: string }>(t, await connect('storage'), 'storage', {
    ping: { handler: () => ({ status: 200, body: 'pong' }) },
  })
  host.publishState({ v: 'before' })
  const reads = new ReadModelBus({
    nc: await connect('gateway'),
    devid,
    services: ['storage'],
    inboxPrefix: inboxPrefix('gateway'),
    logger: silentLogger,
    currentOnly: true,
  })
  t.teardown(() => reads.close())
  await until('the system state', () => reads.readModel('storage') !== undefined)

  process.kill(bus.server.pid!, 'SIGKILL')
  await until('no state while the bus is down', () => reads.readModel('storage') === undefined)
  await t.rejects(reads.request('storage', 'ping', { rid: 'x', tls: false }), BusUnavailableError)

  await until('the state again', () => reads.readModel<{ v: string }>('storage')?.v === 'before', 20_000)
  const reply = await reads.request('storage', 'ping', { rid: 'y', tls: false })
  t.equal(reply.body, 'pong', 'commands work again after nats-server came back')
})

t.test('a service following a read model reads it again after a reconnect: what it missed is not lost', async (t) => {
  const { bus, connect } = await ownBus(t)
  const auth = serve<{ token_key: string }>(t, await connect('auth'), 'auth', {})
  auth.publishState({ token_key: 'first' })
  // The keystore's connection alone goes through a network that the test cuts.
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: bus.server.port })
  t.teardown(() => proxy.close())
  const keystore = await connectBus({
    servers: `nats://127.0.0.1:${proxy.port}`,
    service: 'keystore',
    credentials: bus.credentials.get('keystore')!,
  })
  t.teardown(() => keystore.close())
  const follower = followReadModels(keystore, devid, 'keystore', ['auth'], silentLogger)
  t.teardown(() => follower.close())
  await follower.whenReady()
  const statuses: string[] = []
  void (async () => {
    for await (const status of keystore.status()) statuses.push(status.type)
  })()

  proxy.cut()
  await until('the keystore disconnected', () => statuses.includes('disconnect'))
  auth.publishState({ token_key: 'second' })
  t.same(follower.readModel('auth'), { token_key: 'first' }, 'meanwhile the service keeps the last state it knows')
  proxy.restore()
  await until('the keystore reconnected', () => statuses.includes('reconnect'))
  await until('the state it missed', () => follower.readModel<{ token_key: string }>('auth')?.token_key === 'second')
})

t.test('a nats-server that cannot be found is named, with how to install it', async (t) => {
  const dir = t.testdir()
  await t.rejects(
    NatsServer.start({ binary: 'no-such-nats-server', configFile: join(dir, 'nats.conf'), portsFileDir: dir }),
    { name: 'NatsServerError', message: /no-such-nats-server: not found.*apt-get install nats-server/ },
  )
})

t.test("errors of the nats-server's process after it started are neither thrown nor unhandled", async (t) => {
  const dir = t.testdir()
  const configFile = join(dir, 'nats.conf')
  await writeFile(configFile, `listen: "127.0.0.1:-1"\nports_file_dir: ${JSON.stringify(dir)}\n`)
  const server = await NatsServer.start({ configFile, portsFileDir: dir })
  t.teardown(() => server.stop())
  const rejections: unknown[] = []
  const collect = (reason: unknown) => void rejections.push(reason)
  process.on('unhandledRejection', collect)
  t.teardown(() => void process.off('unhandledRejection', collect))
  // What kills that fail report (an 'error' event nobody listens to is thrown); the process itself is not touched.
  const child = (server as unknown as { child: ChildProcess }).child
  for (const n of [1, 2]) t.doesNotThrow(() => child.emit('error', new Error('kill EPERM')), `error ${n}`)
  await sleep(50)
  t.same(rejections, [])
  t.ok(isProcessAlive(server.pid!), 'the server runs on')
})

t.test('the nats-server dies with the process that started it, even by kill -9', async (t) => {
  const dir = t.testdir()
  const script = `
    import { NatsServer } from ${JSON.stringify(`${distDir}/bus/nats-server.js`)}
    import { writeFileSync } from 'node:fs'
    const dir = ${JSON.stringify(dir)}
    writeFileSync(dir + '/nats.conf', 'listen: "127.0.0.1:-1"\\nports_file_dir: ' + JSON.stringify(dir) + '\\n')
    const server = await NatsServer.start({ configFile: dir + '/nats.conf', portsFileDir: dir })
    process.send(server.pid)
    setInterval(() => {}, 1000)
  `
  // The built module: a child process has no test loader.
  const parent = spawn(process.execPath, ['--input-type=module', '--eval', script], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  })
  const [natsPid] = (await once(parent, 'message')) as [number]
  t.teardown(() => isProcessAlive(natsPid) && process.kill(natsPid, 'SIGKILL'))
  t.ok(isProcessAlive(natsPid), 'running under its parent')
  parent.kill('SIGKILL')
  await until('the nats-server gone with its parent', () => !isProcessAlive(natsPid))
})
