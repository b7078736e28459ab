// The gateway's request/reply over one reply subscription (bus/request-mux.ts).
import { connect, type Msg } from '@nats-io/transport-node'
import t from 'tap'
import { BusTimeoutError, BusUnavailableError } from '../bus/errors.js'
import { RequestMux } from '../bus/request-mux.js'
import { ReadModelBus } from '../bus/read-model-bus.js'
import { encode } from '../protocol/index.js'
import { Subjects } from '../protocol/subjects.js'
import { silentLogger } from './helpers/logger.js'
import { captureTimers } from './helpers/timers.js'
import { natsBus, startNats } from './helpers/nats.js'
import { startTcpProxy } from './helpers/tcp-proxy.js'
import { until } from './helpers/until.js'

const DEVID = '00112233aabbccdd'

t.test(
  'replies reach their requests; a silent responder times out, none is unavailable; a closed connection ends all',
  async (t) => {
    const nats = await startNats(t.testdir())
    t.teardown(() => nats.stop())
    const responder = await connect({ servers: nats.url })
    const client = await connect({ servers: nats.url })
    t.teardown(() => responder.close())
    // A subject each: requests of one turn to one subject would travel as one envelope (bus-batches.test.ts).
    responder.subscribe('echo.*', {
      callback: (_err, msg) => {
        // Answers out of order: the later request's reply comes first.
        const delay = msg.data[0] === 1 ? 30 : 0
        setTimeout(() => msg.respond(msg.data), delay)
      },
    })
    let silent = 0
    responder.subscribe('silent', { callback: () => void silent++ })
    await responder.flush()
    const mux = new RequestMux(client, '_INBOX_test')

    const replies = await Promise.all([1, 2, 3].map((n) => mux.request(`echo.${n}`, Uint8Array.of(n), 2000)))
    t.same(replies, [1, 2, 3], 'each reply to its own request')

    // The waits below are far longer than tap's own timeout: a failure that came only with the
    // wait's end would fail the test by that timeout, not pass as the expected error.
    await t.rejects(mux.request('nobody', Uint8Array.of(0), 600_000), BusUnavailableError, 'no responder, at once')
    await t.rejects(mux.request('silent', Uint8Array.of(0), 200), BusTimeoutError, 'a responder that does not answer')

    const pending = mux.request('silent', Uint8Array.of(0), 600_000)
    await until('the responder has it', () => silent === 2)
    await client.close()
    await t.rejects(pending, BusTimeoutError, 'a closed connection ends what waits, at once: it may have run')
    await t.rejects(mux.request('echo.0', Uint8Array.of(0), 1000), BusUnavailableError, 'and refuses new requests')
  },
)

t.test(
  'a lost connection: a request sent fails as a timeout (it may have run), one not yet sent as unavailable',
  async (t) => {
    const nats = await startNats(t.testdir())
    t.teardown(() => nats.stop())
    const responder = await connect({ servers: nats.url })
    t.teardown(() => responder.close())
    const received: number[] = []
    responder.subscribe('held', { callback: (_err, msg) => void received.push(msg.data[0]!) })
    await responder.flush()
    const client = await connect({ servers: nats.url })
    t.teardown(() => client.close())
    const mux = new RequestMux(client, '_INBOX_test')

    // The waits are far longer than tap's own timeout: only failing at once passes.
    const sent = mux.request('held', Uint8Array.of(1), 600_000)
    await until('the service has it', () => received.includes(1))
    const unsent = mux.request('held', Uint8Array.of(2), 600_000)
    mux.failAll('the bus connection dropped')
    await t.rejects(sent, BusTimeoutError, 'sent: it may still complete')
    await t.rejects(unsent, BusUnavailableError, 'not sent: nothing ran')
    await client.flush()
    await responder.flush()
    t.same(received, [1], 'and what was not sent is never sent')
  },
)

t.test('the gateway sees its connection drop: what it had sent fails as a timeout at once', async (t) => {
  const nats = await startNats(t.testdir())
  t.teardown(() => nats.stop())
  const service = await connect({ servers: nats.url })
  t.teardown(() => service.close())
  const received: number[] = []
  service.subscribe(new Subjects(DEVID).command('store', 'act'), {
    callback: (_err, msg) => void received.push(msg.data.length),
  })
  await service.flush()
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: nats.port })
  t.teardown(() => proxy.close())
  const gateway = await connect({ servers: `nats://127.0.0.1:${proxy.port}`, reconnectTimeWait: 250 })
  t.teardown(() => gateway.close())
  const bus = new ReadModelBus({ nc: gateway, devid: DEVID, services: [], logger: silentLogger, currentOnly: true })
  t.teardown(() => bus.close())

  const pending = bus.request('store', 'act', { rid: 'r', tls: false }, 600_000)
  await until('the service has it', () => received.length === 1)
  proxy.cut()
  await t.rejects(pending, BusTimeoutError, 'a 504, which says it may still complete, not a 503')
  await t.rejects(bus.request('store', 'act', { rid: 'r2', tls: false }), BusUnavailableError, 'new ones: 503')
})

t.test('an envelope answered in parts: each part settles its own commands, whatever else a reply holds', async (t) => {
  const nats = await startNats(t.testdir())
  t.teardown(() => nats.stop())
  const responder = await connect({ servers: nats.url })
  t.teardown(() => responder.close())
  // Each envelope is answered for its first command only, then held: the test says how the rest ends.
  const held: Msg[] = []
  responder.subscribe('parts', {
    callback: (_err, msg) => {
      // Beside the first command's answer: an entry without an index, and one for a command the envelope lacks.
      msg.respond(
        encode([
          [0, 'first'],
          ['junk', 'x'],
          [7, 'nobody'],
        ]),
      )
      held.push(msg)
    },
  })
  responder.subscribe('garbled', { callback: (_err, msg) => void msg.respond(new Uint8Array(0)) })
  await responder.flush()
  const client = await connect({ servers: nats.url })
  t.teardown(() => client.close())
  const mux = new RequestMux(client, '_INBOX_test')

  const [first, second] = [
    mux.request('parts', Uint8Array.of(0xc0), 600_000),
    mux.request('parts', Uint8Array.of(0xc0), 600_000),
  ]
  t.equal(await first, 'first', 'the first command has its answer')
  const refusal = { status: 400, body: { error: 'bad_envelope' } }
  held.shift()!.respond(encode(refusal))
  t.same(await second, refusal, 'a refusal of the whole envelope answers the command still waiting')

  await t.rejects(mux.request('garbled', Uint8Array.of(0xc0), 600_000), {
    name: 'BusUnavailableError',
    message: 'garbled: undecodable reply',
  })

  const [answered, cut] = [
    mux.request('parts', Uint8Array.of(0xc0), 600_000),
    mux.request('parts', Uint8Array.of(0xc0), 600_000),
  ]
  t.equal(await answered, 'first')
  await until('the second envelope is held', () => held.length === 1)
  await client.close()
  await t.rejects(cut, { name: 'BusTimeoutError', message: /the connection is closed after it was sent/ })
})

t.test('a request whose deadline passed before its turn is never sent, nor failed again', async (t) => {
  const nats = await startNats(t.testdir())
  t.teardown(() => nats.stop())
  const responder = await connect({ servers: nats.url })
  t.teardown(() => responder.close())
  let received = 0
  responder.subscribe('held', { callback: () => void received++ })
  await responder.flush()
  const client = await connect({ servers: nats.url })
  t.teardown(() => client.close())
  const mux = new RequestMux(client, '_INBOX_test')
  const HELD = 987_654
  const timers = captureTimers(t, HELD)

  const late = mux.request('held', Uint8Array.of(0xc0), HELD)
  timers.held[0]!()
  mux.failAll('the bus connection dropped')
  await t.rejects(late, { name: 'BusTimeoutError', message: `held: no reply within ${HELD} ms` }, 'its own timeout')
  await client.flush()
  await responder.flush()
  t.equal(received, 0, 'nothing reached the service')
})

t.test('a reply subscription the bus refuses fails what waits, at once', async (t) => {
  const { open } = await natsBus(
    t,
    'authorization { users: [ { user: gateway, password: gateway-password, permissions: { subscribe: "other" } } ] }',
  )
  const client = await open('gateway')
  const mux = new RequestMux(client, '_INBOX_test')
  // Far longer than tap's own timeout: only failing at once passes.
  await t.rejects(mux.request('act', Uint8Array.of(0xc0), 600_000), {
    name: 'BusTimeoutError',
    message: /^act: the reply subscription ended: .*Permissions Violation for Subscription.* after it was sent/,
  })
})
