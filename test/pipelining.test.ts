// Pipelined requests (issue 22, item 9). uWS closes a connection when it parses a request while
// the previous one's answer is pending. The gateway holds a request's successor in the socket
// until the answer is out, so requests in separate reads are answered in order; one that comes in
// the same read as its predecessor still gets the connection closed, and then the predecessor
// must not run: a key created without its answer reaching the client.
import t from 'tap'
import { hostClock } from '../hal/sim/host-clock.js'
import { LogType } from '../protocol/journal.js'
import { bearer, login, owned } from './helpers/owner.js'
import { readJournal } from './helpers/journal.js'
import { rawExchange, requestHead } from './helpers/raw-http.js'

function post(path: string, body: unknown, token?: string): Buffer {
  const text = Buffer.from(JSON.stringify(body))
  const headers: [string, string][] = [
    ['Content-Type', 'application/json'],
    ['Content-Length', String(text.length)],
    ...(token ? Object.entries(bearer(token)) : []),
  ]
  return Buffer.concat([requestHead('POST', path, headers), text])
}

t.test('pipelined requests: answered in order, or not run at all', async (t) => {
  const data = t.testdir()
  // The brake on the host's clock: a login answer that takes 500 ms is the test's pending answer.
  const o = await owned(t, { dataDir: data, boot: { clock: hostClock } })
  const https = { port: Number(new URL(o.https).port), tls: true }
  const token = await login(o.base, 'keymgmt:gen')
  const creates = async () => (await readJournal(data)).records.filter((r) => r.type === LogType.KEY_GENERATION).length
  const create = (label: string) => post('/api/keymgmt/create', { label, type: 'AES256' }, token)
  const status = requestHead('GET', '/api/system/status', [])

  // A login takes at least 500 ms (the brake): the status request arrives while its answer is pending.
  const slow = await rawExchange(https, {
    steps: [post('/api/auth/token', { auth: 'not an eJWT' }), { read: true }, status],
    responses: 2,
  })
  t.same(
    slow.responses.map((r) => r.status),
    [400, 200],
    'a request behind a pending answer waits its turn',
  )
  t.notOk(slow.closed, 'the connection stays')

  const before = await creates()
  const separate = await rawExchange(https, {
    steps: [create('first'), { read: true }, create('second')],
    responses: 2,
  })
  t.same(
    separate.responses.map((r) => [r.status, typeof JSON.parse(r.body.toString()).kid]),
    [
      [200, 'string'],
      [200, 'string'],
    ],
    'two creates, two answers in order',
  )
  t.equal(await creates(), before + 2)

  const together = await rawExchange(https, { steps: [Buffer.concat([create('lost'), status])], responses: 2 })
  if (together.responses.length === 0) {
    t.ok(together.closed, 'one read with two requests: uWS closes the connection')
    t.equal(await creates(), before + 2, 'and the create did not run')
  } else
    t.same(
      together.responses.map((r) => r.status),
      [200, 200],
      'or, read apart, both are answered',
    )
})
