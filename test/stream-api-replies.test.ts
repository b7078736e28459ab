// What the JetStream client of the mirror and hem-audit makes of every reply: an empty message
// read back from a real JetStream, and, from a server that only answers like one, each reply
// JetStream does not send but a broken or hostile backend could, refused as a StreamApiError.
import { join } from 'node:path'
import { connect, headers, type Msg, type NatsConnection } from '@nats-io/transport-node'
import t, { type Test } from 'tap'
import { StreamApi, type StoredMessage } from '../bus/stream-api.js'
import { captureTimers } from './helpers/timers.js'
import { startNats } from './helpers/nats.js'
import { until } from './helpers/until.js'

const encoder = new TextEncoder()
const json = (value: unknown) => encoder.encode(JSON.stringify(value))

/** A connection to a plain nats-server (no JetStream): the test answers the `$JS.API` requests itself. */
async function fakeBackend(t: Test): Promise<{ responder: NatsConnection; client: NatsConnection }> {
  const nats = await startNats(t.testdir())
  t.teardown(() => nats.stop())
  const responder = await connect({ servers: nats.url })
  const client = await connect({ servers: nats.url })
  t.teardown(async () => {
    await client.close()
    await responder.close()
  })
  return { responder, client }
}

/** Answers each request on `subject` with `answer`'s reply (bytes), or lets `answer` do it. */
function answer(nc: NatsConnection, subject: string, reply: (msg: Msg) => Uint8Array | void): void {
  nc.subscribe(subject, {
    callback: (_err, msg) => {
      const data = reply(msg)
      if (data) msg.respond(data)
    },
  })
}

/** A backend whose consumer is made and deleted as JetStream would, and whose deliveries `deliver` makes. */
async function consumerBackend(t: Test, deliver: (responder: NatsConnection, inbox: string) => void) {
  const { responder, client } = await fakeBackend(t)
  answer(responder, '$JS.API.CONSUMER.CREATE.journal', () => json({ name: 'reader' }))
  answer(responder, '$JS.API.CONSUMER.DELETE.journal.reader', () => json({ success: true }))
  answer(responder, '$JS.API.CONSUMER.MSG.NEXT.journal.reader', (msg) => deliver(responder, msg.reply!))
  await responder.flush()
  return new StreamApi(client)
}

async function readAll(api: StreamApi, stream = 'journal'): Promise<StoredMessage[]> {
  const read: StoredMessage[] = []
  for await (const message of api.messages(stream, 1, 10)) read.push(message)
  return read
}

t.test('a message stored without data reads back empty, with its headers', async (t) => {
  const dir = t.testdir()
  const nats = await startNats(dir, -1, `jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }`)
  t.teardown(() => nats.stop())
  const nc = await connect({ servers: nats.url })
  t.teardown(() => nc.close())
  const api = new StreamApi(nc)
  await api.create({ name: 'journal', subjects: ['journal.>'] })
  t.same(await api.publish('journal.a', new Uint8Array(0), { 'Hem-Mark': 'empty' }), { seq: 1, duplicate: false })
  const message = await api.message('journal', { seq: 1 })
  t.equal(message?.data.length, 0)
  t.equal(message?.headers?.get('Hem-Mark'), 'empty')
})

t.test('a reply that is no JetStream answer is an error, with its code when it has one', async (t) => {
  const { responder, client } = await fakeBackend(t)
  answer(responder, '$JS.API.STREAM.INFO.stateless', () => json({ config: {} }))
  answer(responder, '$JS.API.STREAM.CREATE.garbled', () => encoder.encode('<html>'))
  answer(responder, '$JS.API.STREAM.CREATE.terse', () => json({ error: { code: 500 } }))
  answer(responder, '$JS.API.STREAM.CREATE.full', () => json({ error: { code: 400, err_code: 10047 } }))
  answer(responder, '$JS.API.CONSUMER.CREATE.nameless', () => json({ config: {} }))
  answer(responder, 'journal.unacknowledged', () => json({ stream: 'journal' }))
  await responder.flush()
  const api = new StreamApi(client)

  await t.rejects(api.info('stateless'), { name: 'StreamApiError', message: 'stream stateless: the info has no state' })
  await t.rejects(api.create({ name: 'garbled' }), {
    name: 'StreamApiError',
    message: '$JS.API.STREAM.CREATE.garbled: the reply is not JSON',
    cause: SyntaxError,
  })
  const terse = await api.create({ name: 'terse' }).catch((err: unknown) => err)
  t.match(terse, { name: 'StreamApiError', message: '$JS.API.STREAM.CREATE.terse: error (500)' })
  t.equal((terse as { errCode?: number }).errCode, undefined, 'no JetStream code to react to')
  await t.rejects(api.create({ name: 'full' }), {
    message: '$JS.API.STREAM.CREATE.full: error (10047)',
    errCode: 10047,
  })
  await t.rejects(readAll(api, 'nameless'), {
    name: 'StreamApiError',
    message: 'stream nameless: the consumer created has no name',
  })
  await t.rejects(api.publish('journal.unacknowledged', Uint8Array.of(1), {}), {
    name: 'StreamApiError',
    message: 'journal.unacknowledged: the acknowledgement has no sequence',
  })
})

t.test('a delivery refused, or without the stream sequence of its reply subject, ends the read', async (t) => {
  let deliver: (nc: NatsConnection, inbox: string) => void = () => undefined
  const api = await consumerBackend(t, (nc, inbox) => deliver(nc, inbox))
  deliver = (nc, inbox) => nc.publish(inbox, undefined, { headers: headers(409, 'Consumer Deleted') })
  await t.rejects(readAll(api), {
    name: 'StreamApiError',
    message: '$JS.API.CONSUMER.MSG.NEXT.journal.reader: 409 Consumer Deleted',
    errCode: 409,
  })
  deliver = (nc, inbox) => nc.publish(inbox, Uint8Array.of(1))
  await t.rejects(readAll(api), {
    name: 'StreamApiError',
    message: 'a delivered message has no stream sequence (no reply subject)',
  })
  // The server lets no client but JetStream give a $JS.ACK reply subject: these are what else could come.
  for (const reply of ['journal.reader.4', 'JS.ACK.hem.hash.journal.reader.1.4.1.1700000000000000000.0.token']) {
    deliver = (nc, inbox) => nc.publish(inbox, Uint8Array.of(1), { reply })
    await t.rejects(readAll(api), { message: `a delivered message has no stream sequence (${reply})` }, reply)
  }
})

t.test('a batch nobody delivers ends the read at its timeout', async (t) => {
  const HELD = 987_654
  const timers = captureTimers(t, HELD)
  const { responder, client } = await fakeBackend(t)
  let asked = 0
  answer(responder, '$JS.API.CONSUMER.CREATE.journal', () => json({ name: 'reader' }))
  answer(responder, '$JS.API.CONSUMER.MSG.NEXT.journal.reader', () => void asked++)
  let deleted = 0
  answer(responder, '$JS.API.CONSUMER.DELETE.journal.reader', () => (deleted++, json({ success: true })))
  await responder.flush()
  const reading = readAll(new StreamApi(client, undefined, HELD))
  await until('the batch was asked for', () => asked === 1)
  // The last timer armed is the wait for the batch (the consumer's creation armed one before it).
  timers.held.at(-1)!()
  await t.rejects(reading, {
    name: 'StreamApiError',
    message: `$JS.API.CONSUMER.MSG.NEXT.journal.reader: no answer within ${HELD} ms`,
  })
  t.equal(deleted, 1, 'the consumer is deleted all the same')
})
