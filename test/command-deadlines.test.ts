// Each command carries its deadline: a slow service is told apart from a missing one, and a
// service does not start what nobody awaits any more (bus/read-model-bus.ts, bus/service-host.ts).
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node'
import t, { type Test } from 'tap'
import { BusTimeoutError, BusUnavailableError } from '../bus/errors.js'
import { ReadModelBus } from '../bus/read-model-bus.js'
import { ServiceHost } from '../bus/service-host.js'
import { decode, encode } from '../protocol/codec.js'
import type { CommandReply, CommandRequest } from '../protocol/bus-messages.js'
import { Subjects } from '../protocol/subjects.js'
import { deadlinePassed } from '../protocol/deadlines.js'
import { silentLogger } from './helpers/logger.js'
import { startNats } from './helpers/nats.js'
import { until } from './helpers/until.js'

const devid = '00112233aabbccdd'
const subjects = new Subjects(devid)
/** The injected host clock's reading: deadlines are compared with it, never with the wall clock. */
const NOW = 1_700_000_000_000

async function natsConnections(t: Test, count: number): Promise<NatsConnection[]> {
  const nats = await startNats(t.testdir())
  t.teardown(() => nats.stop())
  const connections: NatsConnection[] = []
  for (let i = 0; i < count; i++) {
    const nc = await connect({ servers: nats.url })
    t.teardown(() => nc.close())
    connections.push(nc)
  }
  return connections
}

/** A promise and the function that settles it. */
function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void
  const promise = new Promise<T>((resolve) => (open = resolve))
  return { promise, open }
}

t.test(
  'a slow service times out (BusTimeoutError), a missing one is unavailable; the deadline is in the envelope',
  async (t) => {
    const [service, gateway] = await natsConnections(t, 2)
    const held: Msg[] = []
    const received: CommandRequest[] = []
    service!.subscribe(subjects.command('slow', 'work'), {
      callback: (_err, msg) => {
        received.push(decode<CommandRequest>(msg.data))
        held.push(msg)
      },
    })
    service!.subscribe(subjects.command('fast', 'work'), {
      callback: (_err, msg) => void msg.respond(encode({ status: 200, body: decode<CommandRequest>(msg.data) })),
    })
    await service!.flush()
    const bus = new ReadModelBus({ nc: gateway!, devid, services: [], logger: silentLogger, now: () => NOW })
    t.teardown(() => bus.close())

    await t.rejects(bus.request('slow', 'work', { rid: 'r1', tls: false }, 50), BusTimeoutError, 'took it, no answer')
    // On a loaded host the 50 ms may pass before the service's connection delivers the command.
    await until('the slow service got the command', () => received.length > 0)
    t.equal(received[0]?.deadline, NOW + 50, 'the deadline travelled with the command: now + its budget')

    // Far longer than tap's timeout: had it waited for the deadline, the test would fail by that.
    await t.rejects(
      bus.request('nobody', 'work', { rid: 'r2', tls: false }, 600_000),
      BusUnavailableError,
      'no responder: unavailable at once',
    )

    // The slow service answers after all: nobody waits for that reply, and it disturbs nothing.
    for (const msg of held) msg.respond(encode({ status: 200 }))
    const fast = await bus.request('fast', 'work', { rid: 'r3', tls: false })
    t.equal(fast.status, 200)
    t.equal((fast.body as CommandRequest).rid, 'r3', 'the next reply is its own')
    t.equal((fast.body as CommandRequest).deadline, NOW + 10_000, 'without a budget: the short class, 10 s')
  },
)

t.test('the service host does not start a command whose deadline has passed', async (t) => {
  const [service, caller] = await natsConnections(t, 2)
  let clock = NOW
  const ran: string[] = []
  const blocking = { started: gate(), release: gate() }
  const host = new ServiceHost(
    service!,
    devid,
    'store',
    {
      act: {
        handler: (req) => {
          ran.push(req.rid)
          return { status: 200 }
        },
      },
      block: {
        handler: async (req) => {
          blocking.started.open()
          await blocking.release.promise
          ran.push(req.rid)
          return { status: 200 }
        },
      },
      ping: { handler: () => ({ status: 200 }), exclusive: false },
    },
    silentLogger,
    () => clock,
  )
  host.start()
  t.teardown(() => host.stop())
  await service!.flush()
  const send = async (op: string, req: CommandRequest): Promise<CommandReply> =>
    decode<CommandReply>((await caller!.request(subjects.command('store', op), encode(req), { timeout: 60_000 })).data)

  const late = await send('act', { rid: 'late', tls: false, deadline: NOW })
  t.equal(late.status, 504, 'a deadline reached is a deadline passed')
  t.same(late.body, { error: 'timeout', message: 'The operation was not started: its deadline had passed' })
  const garbled = await send('act', { rid: 'garbled', tls: false, deadline: Number.NaN })
  t.equal(garbled.status, 504, 'a deadline that is not a number counts as passed')
  const text = { rid: 'text', tls: false, deadline: String(NOW + 1000) } as unknown as CommandRequest
  t.equal((await send('act', text)).status, 504, 'and so does a numeric string')
  t.equal((await send('act', { rid: 'due', tls: false, deadline: NOW + 1 })).status, 200)
  t.equal((await send('act', { rid: 'none', tls: false })).status, 200, 'no deadline: always awaited')
  t.same(ran, ['due', 'none'], 'only the commands still awaited ran')

  // An exclusive command is judged when its turn comes: here its deadline passes while it waits
  // behind a slow one, which itself runs to its end although its own deadline passes meanwhile.
  ran.length = 0
  const slow = send('block', { rid: 'slow', tls: false, deadline: NOW + 100 })
  await blocking.started.promise
  const queued = send('act', { rid: 'queued', tls: false, deadline: NOW + 50 })
  // Commands reach the host in order: once the later ping is answered, `queued` is in the mailbox.
  t.equal((await send('ping', { rid: 'ping', tls: false })).status, 200)
  clock = NOW + 200
  blocking.release.open()
  t.equal((await slow).status, 200, 'begun, so finished')
  t.equal((await queued).status, 504, 'its deadline passed while it waited')
  t.same(ran, ['slow'], 'the queued command did not run')
})

t.test('a deadline is a finite number, else it has passed (fail closed)', async (t) => {
  t.notOk(deadlinePassed(undefined, NOW), 'none: always awaited')
  t.notOk(deadlinePassed(NOW + 1, NOW), 'before it: awaited')
  t.ok(deadlinePassed(NOW, NOW), 'reached is passed')
  for (const deadline of [String(NOW + 1000), BigInt(NOW + 1000), Number.NaN, Infinity, null, {}, [NOW + 1000]]) {
    t.ok(deadlinePassed(deadline, NOW), `${typeof deadline} ${String(deadline)}`)
  }
})
