// A view of the bus (bus/read-model-bus.ts) takes a service's state only once there is one: a
// service with none yet is asked again, an event it cannot read or without a state changes nothing,
// a state it may not follow is still read on request, an answer to a question asked before a
// reconnect is stale, and once closed it takes nothing more.
import { connect, type Msg } from '@nats-io/transport-node'
import { pino } from 'pino'
import t from 'tap'
import { ReadModelBus } from '../bus/read-model-bus.js'
import { ServiceHost } from '../bus/service-host.js'
import { encode } from '../protocol/codec.js'
import { Subjects } from '../protocol/subjects.js'
import { silentLogger } from './helpers/logger.js'
import { natsBus, startNats } from './helpers/nats.js'
import { startTcpProxy } from './helpers/tcp-proxy.js'
import { captureTimers } from './helpers/timers.js'
import { until } from './helpers/until.js'

const devid = '00112233aabbccdd'
const subjects = new Subjects(devid)

t.test('a service with no state yet is asked again; an event unreadable or without a state is dropped', async (t) => {
  const { open } = await natsBus(t)
  const serviceNc = await open()
  const auth = new ServiceHost<{ token_key: string }>(serviceNc, devid, 'auth', {}, silentLogger)
  auth.start()
  t.teardown(() => auth.stop())
  let asked = 0
  serviceNc.subscribe(subjects.command('auth', 'state'), { callback: () => void asked++ })
  await serviceNc.flush()

  const warnings: string[] = []
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) })
  const changes: string[] = []
  const view = new ReadModelBus({
    nc: await open(),
    devid,
    services: ['auth'],
    logger,
    onChange: (service) => changes.push(service),
  })
  t.teardown(() => view.close())
  await until('asked twice', () => asked >= 2)
  t.same(changes, [], 'a service that has published nothing yet is no state')

  auth.publishState({ token_key: 'first' })
  await view.whenReady()
  t.same(view.readModel('auth'), { token_key: 'first' })
  serviceNc.publish(subjects.state('auth'), Uint8Array.of(0xc1, 0xff, 0x00))
  serviceNc.publish(subjects.state('auth'), encode({ service: 'auth', rev: 99, boot: 'other' }))
  auth.publishState({ token_key: 'second' })
  await until('the next state', () => view.readModel<{ token_key: string }>('auth')?.token_key === 'second')
  t.same(changes, ['auth', 'auth'], 'nothing between the two')
  t.match(warnings.join(''), /undecodable state event/)
})

t.test('a view never told a state gives up waiting at its deadline', async (t) => {
  const { open } = await natsBus(t)
  const view = new ReadModelBus({ nc: await open(), devid, services: ['keystore'], logger: silentLogger })
  t.teardown(() => view.close())
  await t.rejects(view.whenReady(0), { name: 'BusUnavailableError', message: 'no state from keystore within 0 ms' })
})

t.test('a state event the bus does not let a view follow: the state is still read on request', async (t) => {
  // The gateway may not subscribe to auth's state events, only ask for them.
  const { open } = await natsBus(
    t,
    `authorization { users: [
      { user: auth, password: auth-password }
      { user: gateway, password: gateway-password, permissions: { subscribe: { deny: "${subjects.state('auth')}" } } }
    ] }`,
  )
  const auth = new ServiceHost<{ token_key: string }>(await open('auth'), devid, 'auth', {}, silentLogger)
  auth.start()
  t.teardown(() => auth.stop())
  auth.publishState({ token_key: 'first' })
  const view = new ReadModelBus({ nc: await open('gateway'), devid, services: ['auth'], logger: silentLogger })
  t.teardown(() => view.close())
  await view.whenReady()
  t.same(view.readModel('auth'), { token_key: 'first' })
})

t.test('a state that arrives after the view closed is not taken', async (t) => {
  const { open } = await natsBus(t)
  const serviceNc = await open()
  const held: Msg[] = []
  serviceNc.subscribe(subjects.command('auth', 'state'), { callback: (_err, msg) => void held.push(msg) })
  serviceNc.subscribe('barrier', { callback: (_err, msg) => void msg.respond(new Uint8Array(0)) })
  await serviceNc.flush()
  const changes: string[] = []
  const viewNc = await open()
  const view = new ReadModelBus({
    nc: viewNc,
    devid,
    services: ['auth'],
    logger: silentLogger,
    onChange: (service) => changes.push(service),
  })
  await until('the view asked for the state', () => held.length === 1)
  view.close()
  held[0]!.respond(encode({ service: 'auth', rev: 1, boot: 'b', state: { token_key: 'late' } }))
  // Answered after the state on the same connections: by then the view has had the state.
  await viewNc.request('barrier', new Uint8Array(0), { timeout: 60_000 })
  t.equal(view.readModel('auth'), undefined)
  t.same(changes, [])
})

t.test('a state asked for before the connection dropped is not taken: the one asked for since is', async (t) => {
  const nats = await startNats(t.testdir())
  t.teardown(() => nats.stop())
  const serviceNc = await connect({ servers: nats.url })
  t.teardown(() => serviceNc.close())
  const held: Msg[] = []
  serviceNc.subscribe(subjects.command('auth', 'state'), { callback: (_err, msg) => void held.push(msg) })
  await serviceNc.flush()
  // The view asks with a 1 s timeout: held, the first question still waits when its answer comes.
  captureTimers(t, 1000)
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: nats.port })
  t.teardown(() => proxy.close())
  const viewNc = await connect({ servers: `nats://127.0.0.1:${proxy.port}`, reconnectTimeWait: 250 })
  t.teardown(() => viewNc.close())
  const seen: unknown[] = []
  const view: ReadModelBus = new ReadModelBus({
    nc: viewNc,
    devid,
    services: ['auth'],
    logger: silentLogger,
    onChange: (service) => seen.push(view.readModel(service)),
  })
  t.teardown(() => view.close())
  await until('the view asked', () => held.length === 1)
  proxy.cut()
  proxy.restore()
  await until('the view asked again once back', () => held.length === 2)
  // Possibly missed events since the first question: its answer may be older than the state now.
  held[0]!.respond(encode({ service: 'auth', rev: 1, boot: 'b', state: { token_key: 'asked before' } }))
  held[1]!.respond(encode({ service: 'auth', rev: 1, boot: 'b', state: { token_key: 'asked since' } }))
  await until('the state', () => seen.length > 0)
  t.same(seen, [{ token_key: 'asked since' }])
})
