// The scaling group's batch size (bench/bus-batch.ts): the commands per NATS message from hemd's
// gateway, read off nats-server's `GET /connz` before and after a load. No server runs here: the
// answers are in the shape nats-server 2.9 gives.
import t from 'tap'
import { busCount, ConnzError, GATEWAY_CONNECTION, publishedBy } from '../bench/bus-batch.js'

const connection = (cid: number, name: string | undefined, inMsgs: unknown) => ({
  cid,
  kind: 'Client',
  type: 'nats',
  ip: '127.0.0.1',
  port: 40000 + cid,
  in_msgs: inMsgs,
  out_msgs: 7,
  in_bytes: 1234,
  out_bytes: 5678,
  subscriptions: 3,
  ...(name === undefined ? {} : { name }),
})

const connz = (...connections: unknown[]) => ({
  server_id: 'NABC',
  now: '2026-11-27T00:00:00Z',
  num_connections: connections.length,
  total: connections.length,
  offset: 0,
  limit: 1024,
  connections,
})

t.test('the gateway connection is hemd-gateway, as bus/connection.ts names it', async (t) => {
  t.equal(GATEWAY_CONNECTION, 'hemd-gateway')
})

t.test("publishedBy: the named connection's in_msgs, not another's", async (t) => {
  const answer = connz(
    connection(1, 'hemd-keystore', 900),
    connection(2, 'hemd-gateway', 4321),
    connection(3, undefined, 5),
    connection(4, 'hemd-eventstore', 77),
  )
  t.equal(publishedBy(answer, 'hemd-gateway'), 4321)
  t.equal(publishedBy(answer, 'hemd-keystore'), 900)
})

t.test('publishedBy sums the connections of one name', async (t) => {
  t.equal(publishedBy(connz(connection(1, 'hemd-gateway', 10), connection(2, 'hemd-gateway', 32)), 'hemd-gateway'), 42)
})

t.test('publishedBy refuses what it cannot count', async (t) => {
  t.throws(() => publishedBy(connz(connection(1, 'hemd-keystore', 3)), 'hemd-gateway'), ConnzError, 'no gateway')
  t.throws(() => publishedBy(connz(), 'hemd-gateway'), ConnzError, 'no connection at all')
  t.throws(() => publishedBy({ error: 'x' }, 'hemd-gateway'), ConnzError, 'no connections list')
  t.throws(() => publishedBy(null, 'hemd-gateway'), ConnzError, 'not an object')
  for (const bad of ['12', -1, 1.5, undefined])
    t.throws(() => publishedBy(connz(connection(1, 'hemd-gateway', bad)), 'hemd-gateway'), ConnzError, String(bad))
})

t.test('busCount: requests answered over the messages published between the two counts', async (t) => {
  t.same(busCount(1000, 1000 + 500, 4000), { requests: 4000, messages: 500, batch: 8 })
  t.same(busCount(7, 7 + 3000, 3000), { requests: 3000, messages: 3000, batch: 1 }, 'one message per request')
  const none = busCount(50, 50, 0)
  t.equal(none.messages, 0)
  t.ok(Number.isNaN(none.batch), 'no message: the batch is unknown, not infinite')
  t.throws(() => busCount(500, 20, 100), ConnzError, 'a count that went down (a reconnect) is refused')
})
