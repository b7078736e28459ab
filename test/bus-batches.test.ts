// The commands of one event-loop turn for one service operation travel as one envelope, and come back as one
// message: bus/request-mux.ts (sender), bus/service-host.ts and bus/batch-replies.ts (service), the journal's
// group commit (eventstore/journal.ts) and the split journal's appends (actors/eventstore/remote-journal.ts).
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { EventstoreActor } from '../actors/eventstore/eventstore-actor.js'
import { RemoteJournal } from '../actors/eventstore/remote-journal.js'
import { BusTimeoutError } from '../bus/errors.js'
import { ReadModelBus } from '../bus/read-model-bus.js'
import { RequestMux } from '../bus/request-mux.js'
import { type OperationSpec, ServiceHost } from '../bus/service-host.js'
import { inboxPrefix } from '../bus/services.js'
import { Journal } from '../eventstore/index.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import type { AppendHandle } from '../hal/types.js'
import type { CommandReply, CommandRequest } from '../protocol/bus-messages.js'
import { decode, encode } from '../protocol/codec.js'
import { BATCH_LIMITS, packArray } from '../protocol/command-batch.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { Subjects } from '../protocol/subjects.js'
import { DelegatingJournalMedia, overrideHandle } from './helpers/delegating-media.js'
import { options } from './helpers/journal-fixtures.js'
import { silentLogger } from './helpers/logger.js'
import { startNats } from './helpers/nats.js'
import { until } from './helpers/until.js'

const DEVID = '00112233aabbccdd'
const subjects = new Subjects(DEVID)
const SHORT = 10_000

interface Bus {
  service: NatsConnection
  sender: NatsConnection
  bus: ReadModelBus
  /** What crossed the bus to `subject` (commands) and to the sender's inbox (replies), as a bystander saw it. */
  watch(subject: string): Promise<{ commands: unknown[]; replies: unknown[] }>
  host(operations: Record<string, OperationSpec>): ServiceHost<unknown>
}

/** A service `store` on a plain nats-server, a sender's bus, and a bystander that sees every message. */
async function bus(t: Test): Promise<Bus> {
  const nats = await startNats(t.testdir())
  t.teardown(() => nats.stop())
  const open = async () => {
    const nc = await connect({ servers: nats.url })
    t.teardown(() => nc.close())
    return nc
  }
  const [service, sender, bystander] = await Promise.all([open(), open(), open()])
  const readModels = new ReadModelBus({
    nc: sender,
    devid: DEVID,
    services: [],
    logger: silentLogger,
    inboxPrefix: '_INBOX_sender',
  })
  t.teardown(() => readModels.close())
  return {
    service,
    sender,
    bus: readModels,
    async watch(subject) {
      const seen = { commands: [] as unknown[], replies: [] as unknown[] }
      const keep = (into: unknown[]) => (_err: Error | null, msg: Msg) => void into.push(decode(msg.data))
      bystander.subscribe(subject, { callback: keep(seen.commands) })
      bystander.subscribe('_INBOX_sender.>', { callback: keep(seen.replies) })
      await bystander.flush()
      return seen
    },
    host(operations) {
      const host = new ServiceHost(service, DEVID, 'store', operations, silentLogger)
      host.start()
      t.teardown(() => host.stop())
      return host
    },
  }
}

/** A handler's answer naming the command it answers. */
const echo: OperationSpec = { exclusive: false, handler: (req) => ({ status: 200, body: req.rid }) }

const request = (b: Bus, op: string, rid: string, body?: unknown) =>
  b.bus.request('store', op, { rid, tls: false, ...(body === undefined ? {} : { body }) }, SHORT)

t.test('the requests of one turn to one operation travel as one message, and each gets its own reply', async (t) => {
  const b = await bus(t)
  b.host({ echo })
  const seen = await b.watch(subjects.command('store', 'echo'))
  await Promise.all([b.service.flush(), b.sender.flush()])

  const rids = Array.from({ length: 10 }, (_, i) => `r${i}`)
  const replies = await Promise.all(rids.map((rid) => request(b, 'echo', rid)))
  t.same(
    replies.map((reply) => reply.body),
    rids,
    'every reply to its own request',
  )
  await until('the bystander saw it all', () => seen.replies.length === 1)
  t.equal(seen.commands.length, 1, 'one message carried the ten commands')
  t.same(
    (seen.commands[0] as CommandRequest[]).map((command) => command.rid),
    rids,
    'in the order they were made, each with its own id',
  )
  t.ok(
    (seen.commands[0] as CommandRequest[]).every((command) => Number.isFinite(command.deadline)),
    'and its own deadline',
  )
  t.equal(seen.replies.length, 1, 'one message carried the ten replies')

  const lone = await request(b, 'echo', 'alone')
  t.equal(lone.body, 'alone')
  await until('the bystander saw it', () => seen.commands.length === 2)
  t.notOk(Array.isArray(seen.commands[1]), 'a lone request travels as itself, in no envelope')
  t.notOk(Array.isArray(seen.replies[1]), 'and so does its reply')
})

t.test("a command's failure, refusal, slowness or timeout is its own", async (t) => {
  const b = await bus(t)
  let release = () => {}
  const gate = new Promise<void>((resolve) => (release = resolve))
  let slowRan = false
  b.host({
    act: {
      exclusive: false,
      handler: async (req) => {
        if (req.rid === 'throws') throw new Error('broken')
        if (req.rid === 'slow') {
          await gate
          slowRan = true
        }
        return { status: 200, body: req.rid }
      },
    },
  })
  const seen = await b.watch(subjects.command('store', 'act'))
  await Promise.all([b.service.flush(), b.sender.flush()])
  const mux = new RequestMux(b.sender, '_INBOX_sender')
  const subject = subjects.command('store', 'act')
  const command = (rid: string, deadline = Date.now() + SHORT) => encode({ rid, tls: false, deadline })

  const slow = mux.request(subject, command('slow'), 600_000)
  const fast = mux.request(subject, command('fast'), 600_000)
  const throws = mux.request(subject, command('throws'), 600_000)
  const late = mux.request(subject, command('late', Date.now() - 1), 600_000)
  const impatient = t.rejects(
    mux.request(subject, command('impatient-slow'), 1),
    BusTimeoutError,
    "a caller's own timeout ends its wait only",
  )
  t.match(await fast, { status: 200, body: 'fast' }, 'answered while another of its envelope still runs')
  t.match(await throws, { status: 500, body: { error: 'internal_error' } }, 'a failing command: 500, for it alone')
  t.match(await late, { status: 504, body: { error: 'timeout' } }, 'a command past its deadline is not started')
  await impatient
  t.notOk(slowRan, 'the slow one is still running')
  release()
  t.match(await slow, { status: 200, body: 'slow' }, 'and answers when it is done')
  await until('the bystander saw both reply messages', () => seen.replies.length === 2)
  t.equal(seen.commands.length, 1, 'all five went as one envelope')
  t.equal((seen.replies[1] as unknown[]).length, 1, 'the slow one came back in a message of its own')
})

t.test('the exclusive commands of an envelope run one at a time, in their order', async (t) => {
  const b = await bus(t)
  const log: string[] = []
  b.host({
    write: {
      handler: async (req) => {
        log.push(`start ${req.rid}`)
        await new Promise((resolve) => setImmediate(resolve))
        log.push(`end ${req.rid}`)
        return { status: 200 }
      },
    },
  })
  await b.service.flush()
  await Promise.all(['a', 'b', 'c'].map((rid) => request(b, 'write', rid)))
  t.same(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
})

t.test('an envelope is bounded in commands and bytes', async (t) => {
  const b = await bus(t)
  b.host({ echo })
  const seen = await b.watch(subjects.command('store', 'echo'))
  await Promise.all([b.service.flush(), b.sender.flush()])

  const many = Array.from({ length: 150 }, (_, i) => `m${i}`)
  const replies = await Promise.all(many.map((rid) => request(b, 'echo', rid)))
  t.same(
    replies.map((reply) => reply.body),
    many,
  )
  await until('the bystander saw them', () => seen.commands.length === 3)
  t.same(
    seen.commands.map((message) => (message as unknown[]).length),
    [BATCH_LIMITS.commands, BATCH_LIMITS.commands, 150 - 2 * BATCH_LIMITS.commands],
    'at most BATCH_LIMITS.commands a message',
  )

  const big = 'x'.repeat(BATCH_LIMITS.bytes)
  const mixed = await Promise.all([
    request(b, 'echo', 'small-1'),
    request(b, 'echo', 'big', big),
    request(b, 'echo', 'small-2'),
  ])
  t.same(
    mixed.map((reply) => reply.body),
    ['small-1', 'big', 'small-2'],
  )
  await until('the bystander saw them', () => seen.commands.length === 6)
  t.same(
    seen.commands.slice(3).map((message) => (Array.isArray(message) ? message.length : 'alone')),
    ['alone', 'alone', 'alone'],
    'no message above BATCH_LIMITS.bytes of commands: the big one goes alone, and so do the ones around it',
  )

  const command = encode({ rid: 'x', tls: false })
  const ask = async (envelope: Uint8Array) =>
    decode<CommandReply>((await b.sender.request(subjects.command('store', 'echo'), envelope, { timeout: SHORT })).data)
  t.match(
    await ask(packArray(Array.from({ length: BATCH_LIMITS.commands + 1 }, () => command))),
    { status: 400, body: { error: 'bad_envelope' } },
    'the service refuses an envelope of too many commands, unread',
  )
  t.match(await ask(packArray([])), { status: 400, body: { error: 'bad_envelope' } }, 'and an empty one')
  // The refusal needs no turn of its own, so it may come first: the parts are compared by index.
  const parts = (await ask(packArray([command, encode('not a command')]))) as unknown as [number, CommandReply][]
  t.match(
    parts.sort(([a], [b]) => a - b),
    [
      [0, { status: 200 }],
      [1, { status: 400, body: { error: 'bad_envelope' } }],
    ],
    'a command that is no map is refused, alone',
  )
})

/** A journal on `dir` that counts the writes reaching its file. */
async function countingJournal(dir: string): Promise<{ journal: Journal; writes: () => number }> {
  let writes = 0
  class Counting extends DelegatingJournalMedia {
    override async open(id: string): Promise<AppendHandle> {
      const handle = await this.inner.open(id)
      return overrideHandle(handle, {
        append: (data) => {
          writes += 1
          return handle.append(data)
        },
      })
    }
  }
  const journal = await Journal.open(options(new Counting(new FileJournalMedia(join(dir, 'journal')))))
  return { journal, writes: () => writes }
}

const ENTRY = { type: LogType.CRYPTO_ENCRYPT, result: LogResult.OK }

t.test("the journal records of an envelope's commands are committed as one group", async (t) => {
  const b = await bus(t)
  const { journal, writes } = await countingJournal(t.testdir())
  t.teardown(() => journal.close())
  b.host({
    encrypt: {
      exclusive: false,
      handler: async () => ({ status: 200, body: await journal.append([ENTRY]) }),
    },
  })
  await b.service.flush()
  const before = writes()
  const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => request(b, 'encrypt', `e${i}`)))
  t.equal(writes() - before, 1, 'one write (and one fsync) for the twenty records')
  const seqs = replies.map((reply) => (reply.body as { seq: number }[])[0]!.seq)
  t.same(
    seqs,
    seqs.map((_, i) => seqs[0]! + i),
    'in the order of the envelope',
  )
})

t.test('split: the appends of one turn reach the eventstore as one message and one commit', async (t) => {
  const b = await bus(t)
  const { journal, writes } = await countingJournal(t.testdir())
  t.teardown(() => journal.close())
  const eventstore = new EventstoreActor(b.service, DEVID, journal, silentLogger)
  await eventstore.start()
  t.teardown(() => eventstore.stop())
  const seen = await b.watch(subjects.command('eventstore', 'append'))
  await Promise.all([b.service.flush(), b.sender.flush()])
  const remote = new RemoteJournal(b.sender, DEVID, inboxPrefix('keystore'))
  const before = writes()
  const positions = await Promise.all(Array.from({ length: 12 }, () => remote.append([ENTRY])))
  t.equal(new Set(positions.map(([position]) => position!.seq)).size, 12, 'each append has its own place')
  await until('the bystander saw it', () => seen.commands.length === 1)
  t.equal((seen.commands[0] as unknown[]).length, 12, 'one envelope of twelve appends')
  t.equal(writes() - before, 1, 'one commit')
})
