import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { connectBus } from '../bus/connection.js'
import { decode, encode } from '../protocol/codec.js'
import { BusUnavailableError } from '../bus/errors.js'
import { ReadModelBus } from '../bus/read-model-bus.js'
import { ServiceHost } from '../bus/service-host.js'
import { Subjects } from '../protocol/subjects.js'
import { inboxPrefix, services } from '../bus/services.js'
import { gatewayProjections } from '../gateway/device-view.js'
import { startOwnBus } from '../bus/bus-setup.js'
import { NatsServer } from '../bus/nats-server.js'
import { isProcessAlive } from '../hal/sim/process-alive.js'
import { silentLogger } from './helpers/logger.js'
import { until } from './helpers/until.js'
import { distDir } from './helpers/device.js'

const devid = '00112233aabbccdd'
const subjects = new Subjects(devid)

async function ownBus(t: Test) {
  const bus = await startOwnBus({ devid, runDir: t.testdir() })
  t.teardown(() => bus.server.stop())
  const connect = async (service: string, onConnectionChange?: (up: boolean) => void) => {
    const nc = await connectBus({
      servers: bus.url,
      service,
      credentials: bus.credentials.get(service)!,
      ...(onConnectionChange ? { onConnectionChange } : {}),
    })
    t.teardown(() => nc.close())
    return nc
  }
  return { bus, connect }
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
  await until('state n = 1', () => reads.readModel<{ n: number }>('storage')?.n === 1, 10_000)
  host.publishState({ n: 2 })
  await until('state n = 2', () => reads.readModel<{ n: number }>('storage')?.n === 2, 10_000)

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
  const journalHost = new ServiceHost(
    journalNc,
    devid,
    'eventstore',
    {
      append: { handler: () => ({ status: 200, body: 'appended' }) },
    },
    silentLogger,
  )
  journalHost.start()
  t.teardown(() => journalHost.stop())
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
  await until('a subscription error', () => errors.length > 0, 10_000)
  t.match(errors[0], /permission/i, 'the gateway may not answer commands')

  const systemHost = new ServiceHost(
    system,
    devid,
    'system',
    {
      selftest: { handler: () => ({ status: 200 }) },
      checkin: { handler: () => ({ status: 200 }) },
    },
    silentLogger,
  )
  systemHost.start()
  t.teardown(() => systemHost.stop())
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
})

t.test('the gateway reads the state events its projections render, and no others', async (t) => {
  const gateway = services.find((s) => s.name === 'gateway')!
  t.same([...gateway.listens].sort(), [...gatewayProjections].sort())
})

t.test('the bus down: commands and reads refused, then everything recovers', async (t) => {
  const { bus, connect } = await ownBus(t)
  const host = new ServiceHost<{ v: string }>(
    await connect('storage'),
    devid,
    'storage',
    {
      ping: { handler: () => ({ status: 200, body: 'pong' }) },
    },
    silentLogger,
  )
  host.start()
  t.teardown(() => host.stop())
  host.publishState({ v: 'before' })
  let reads: ReadModelBus | undefined
  const gateway = await connect('gateway', (up) => reads?.setConnected(up))
  reads = new ReadModelBus({
    nc: gateway,
    devid,
    services: ['storage'],
    inboxPrefix: inboxPrefix('gateway'),
    logger: silentLogger,
  })
  t.teardown(() => reads!.close())
  await until('the system state', () => reads!.readModel('storage') !== undefined, 10_000)

  process.kill(bus.server.pid!, 'SIGKILL')
  await until('no state while the bus is down', () => reads!.readModel('storage') === undefined, 10_000)
  await t.rejects(reads.request('storage', 'ping', { rid: 'x', tls: false }), BusUnavailableError)

  await until('the state again', () => reads!.readModel<{ v: string }>('storage')?.v === 'before', 20_000)
  const reply = await reads.request('storage', 'ping', { rid: 'y', tls: false })
  t.equal(reply.body, 'pong', 'commands work again after nats-server came back')
})

t.test('a nats-server that cannot be found is named, with how to install it', async (t) => {
  const dir = t.testdir()
  await t.rejects(
    NatsServer.start({ binary: 'no-such-nats-server', configFile: join(dir, 'nats.conf'), portsFileDir: dir }),
    { name: 'NatsServerError', message: /no-such-nats-server: not found.*apt-get install nats-server/ },
  )
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
  await until('the nats-server gone with its parent', () => !isProcessAlive(natsPid), 10_000)
})
