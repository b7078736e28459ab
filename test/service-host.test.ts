// The service host (bus/service-host.ts): its stop lets the commands begun answer, within their
// deadlines; an operation is one of its own; a machine's refusal reaching it is a 409; what it answers itself.
import { connect } from '@nats-io/transport-node'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { EventRefusedError } from '../actors/host/event-refused-error.js'
import { closeBus } from '../bus/connection.js'
import { BusTimeoutError } from '../bus/errors.js'
import { type OperationSpec, ServiceHost } from '../bus/service-host.js'
import { decode, encode } from '../protocol/codec.js'
import type { CommandReply, CommandRequest } from '../protocol/bus-messages.js'
import { TIMEOUT_ERROR } from '../protocol/index.js'
import { Subjects } from '../protocol/subjects.js'
import { silentLogger } from './helpers/logger.js'
import { natsBus, startNats } from './helpers/nats.js'
import { until } from './helpers/until.js'

const devid = '00112233aabbccdd'
const subjects = new Subjects(devid)

/** A promise and the function that settles it. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

async function hosted(t: Test, operations: Record<string, OperationSpec>, logger = silentLogger) {
  const nats = await startNats(t.testdir())
  t.teardown(() => nats.stop())
  const service = await connect({ servers: nats.url })
  const caller = await connect({ servers: nats.url })
  t.teardown(() => service.close())
  t.teardown(() => caller.close())
  const host = new ServiceHost(service, devid, 'store', operations, logger)
  host.start()
  await service.flush()
  const send = async (op: string, req: Partial<CommandRequest> = {}, timeout = 60_000): Promise<CommandReply> => {
    const msg = await caller.request(subjects.command('store', op), encode({ rid: op, tls: false, ...req }), {
      timeout,
    })
    return decode<CommandReply>(msg.data)
  }
  return { host, service, caller, send }
}

/** Collects unhandled rejections while the test runs. */
function unhandledRejections(t: Test): unknown[] {
  const rejections: unknown[] = []
  const collect = (reason: unknown) => void rejections.push(reason)
  process.on('unhandledRejection', collect)
  t.teardown(() => void process.off('unhandledRejection', collect))
  return rejections
}

t.test('stop waits for the commands begun, until their deadlines, so that their replies go out', async (t) => {
  const rejections = unhandledRejections(t)
  const started = { quick: gate(), stuck: gate() }
  const release = { quick: gate(), stuck: gate() }
  const ended = new Set<string>()
  const { host, service, send } = await hosted(
    t,
    Object.fromEntries(
      (['quick', 'stuck'] as const).map((op) => [
        op,
        {
          exclusive: false,
          handler: async () => {
            started[op].open()
            await release[op].promise
            ended.add(op)
            return { status: 200, body: op }
          },
        },
      ]),
    ),
  )
  const quick = send('quick', { deadline: Date.now() + 30_000 })
  const stuck = send('stuck', { deadline: Date.now() + 500 }, 2000)
  await Promise.all([started.quick.promise, started.stuck.promise])

  let stopped = false
  const stopping = host.stop().then(() => (stopped = true))
  await sleep(100)
  t.notOk(stopped, 'stop waits for the commands begun')
  release.quick.open()
  t.same((await quick).body, 'quick', 'whose reply goes out before the connection closes')
  await stopping
  t.notOk(ended.has('stuck'), 'but not beyond the deadline of one that does not end')
  // As the owner does next (runtime/run-service.ts): the connection is closed under the command still running.
  await closeBus(service)
  release.stuck.open()
  await t.rejects(stuck, 'its caller, who gave up at its deadline, gets no reply')
  await sleep(50)
  t.same(rejections, [], 'and its reply, sent on a closed connection, is no unhandled rejection')
})

t.test('a reply that cannot be sent is logged, not an unhandled rejection', async (t) => {
  const rejections = unhandledRejections(t)
  const lines: string[] = []
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) })
  // Over the bus's max_payload (1 MiB): the publish throws.
  const { host, send } = await hosted(
    t,
    { big: { handler: () => ({ status: 200, body: 'x'.repeat(2 << 20) }) } },
    logger,
  )
  t.teardown(() => host.stop())
  await t.rejects(send('big', {}, 500), 'its caller gets no reply')
  await sleep(50)
  t.same(rejections, [])
  t.match(lines.join(''), /a reply could not be sent/)
})

t.test("an operation is one of the service's own: no name every object inherits", async (t) => {
  const { host, send } = await hosted(t, { act: { handler: () => ({ status: 200 }) } })
  t.teardown(() => host.stop())
  t.equal((await send('act')).status, 200)
  for (const op of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    t.same(await send(op), { status: 404, body: { error: 'unknown_operation', message: `no operation ${op}` } }, op)
  }
})

t.test('a refusal of a machine that reaches the host is a 409, not an internal error', async (t) => {
  const { host, send } = await hosted(t, {
    unlock: {
      handler: () => {
        throw new EventRefusedError('disk', '1', 'unformatted', 'UNLOCK')
      },
    },
  })
  t.teardown(() => host.stop())
  const reply = await send('unlock')
  t.equal(reply.status, 409)
  t.same(reply.body, { error: 'conflict', message: 'The device cannot do this in its current state' })
})

t.test(
  'what the host answers itself: an envelope it cannot decode, a late service, a failure without a reason',
  async (t) => {
    const ran: string[] = []
    const { host, caller, send } = await hosted(t, {
      act: { handler: (req) => (ran.push(req.rid), { status: 200 }) },
      relay: {
        handler: () => {
          throw new BusTimeoutError('hem.00112233aabbccdd.cmd.keystore.get: no reply within 5000 ms')
        },
      },
      // A rejection with no reason: not even its logging may take the host down.
      vague: { handler: () => Promise.reject(undefined) },
    })
    t.teardown(() => host.stop())
    const garbled = await caller.request(subjects.command('store', 'act'), Uint8Array.of(0xc1, 0xff), {
      timeout: 60_000,
    })
    t.same(decode(garbled.data), {
      status: 400,
      body: { error: 'bad_envelope', message: 'the command envelope cannot be decoded' },
    })
    t.same(await send('relay'), { status: 504, body: TIMEOUT_ERROR }, 'slow, not out of reach')
    t.same(await send('vague'), { status: 500, body: { error: 'internal_error', message: 'the operation failed' } })

    // Sent with no reply subject: it runs all the same, and its answer goes nowhere.
    caller.publish(subjects.command('store', 'act'), encode({ rid: 'unanswered', tls: false }))
    t.equal((await send('act')).status, 200)
    t.same(ran, ['unanswered', 'act'], 'in the order they came')
  },
)

t.test('a command subscription the bus refuses is logged', async (t) => {
  const lines: string[] = []
  const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) })
  const { open } = await natsBus(
    t,
    'authorization { users: [ { user: store, password: store-password, permissions: { subscribe: "other" } } ] }',
  )
  const nc = await open('store')
  const host = new ServiceHost(nc, devid, 'store', {}, logger)
  host.start()
  await until('the refusal is logged', () => lines.length > 0)
  t.match(JSON.parse(lines[0]!), {
    msg: 'command subscription failed',
    service: 'store',
    err: /Permissions Violation for Subscription/,
  })
})
