// The DIAG build answers a request line with raw spaces after its path (crypto-contract §6): the family's
// certification script ends a key-store fault drill with `GET /api/diag/wipe_config   HTTP/1.1`, which
// uWebSockets.js alone leaves unanswered. The DIAG build's front reads request lines before uWS, over HTTP
// and HTTPS, keeping keep-alive and pipelining; a normal build has no front and leaves such a line as before.
import t, { type Test } from 'tap'
import { bootDevice } from './helpers/device.js'
import { expectFresh } from './helpers/fresh-device.js'
import { boots, rebooted } from './helpers/model-device.js'
import { owned } from './helpers/owner.js'
import { header, rawExchange, type RawResponse, type Target } from './helpers/raw-http.js'

/** A request line exactly as PHP's stream wrapper sends a URL written with spaces after its path. */
function spaced(path: string, spaces = 3): Buffer {
  return Buffer.from(`GET ${path}${' '.repeat(spaces)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
}

function plain(path: string): Buffer {
  return Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
}

function targets(device: { httpUrl?: string; httpsUrl?: string }): { http: Target; https: Target } {
  return {
    http: { port: Number(new URL(device.httpUrl!).port), tls: false },
    https: { port: Number(new URL(device.httpsUrl!).port), tls: true },
  }
}

/** Sends the certification script's wipe_config line; checks its answer and the close, then waits for the restart. */
async function wipeWithSpaces(t: Test, target: Target, base: string, dataDir: string): Promise<void> {
  const before = await boots(dataDir)
  // Two answers asked for: the exchange then ends with the connection's close, after the one answer.
  const outcome = await rawExchange(target, { steps: [spaced('/api/diag/wipe_config')], responses: 2 })
  t.equal(outcome.responses.length, 1, 'one answer')
  const answer = outcome.responses[0]
  t.equal(answer?.status, 200, 'answered 200')
  t.equal(answer && header(answer, 'content-length'), '0', 'with no body')
  t.equal(answer && header(answer, 'connection'), 'close')
  t.ok(outcome.closed, 'then the connection closes')
  if (answer?.status !== 200) return
  await rebooted(base, dataDir, before)
}

t.test('wipe_config with raw spaces before HTTP/1.1 is answered and done, over HTTP and over HTTPS', async (t) => {
  const o = await owned(t, { variant: 'P', boot: { diag: true } })
  const { http, https } = targets(o.device)
  await wipeWithSpaces(t, http, o.base, o.device.dataDir)
  await expectFresh(t, o.base, o.device.dataDir, 'P')
  await wipeWithSpaces(t, https, o.base, o.device.dataDir)
  await expectFresh(t, o.base, o.device.dataDir, 'P')
})

t.test('spaced, plain and pipelined requests on one kept-alive connection, in order', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  for (const target of Object.values(targets(device))) {
    const scheme = target.tls ? 'HTTPS' : 'HTTP'
    const outcome = await rawExchange(target, {
      steps: [
        spaced('/api/diag/test'),
        { responses: 1 },
        // Reads first: uWS closes a connection that brings a request while a command's answer is pending.
        Buffer.concat([
          spaced('/api/system/status', 2),
          plain('/api/system/version'),
          spaced('/api/diag/memdump/0/16'),
        ]),
        { responses: 4 },
        plain('/api/diag/test'),
        { responses: 5 },
        spaced('/api/no/such/path', 5),
      ],
      responses: 6,
    })
    const answers = outcome.responses
    t.same(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200, 404],
      `${scheme}: every request answered, in order`,
    )
    t.notOk(outcome.closed, `${scheme}: the connection stays open`)
    const json = (a: RawResponse | undefined) => JSON.parse(a?.body.toString() ?? 'null') as Record<string, unknown>
    t.equal(answers[0]?.body.length, 0, 'diag/test: empty')
    t.equal(json(answers[1]).inited, false, 'status')
    t.match(json(answers[2]).fwv, /-DIAG$/, 'version')
    t.equal(json(answers[3]).length, 16, 'memdump')
    t.equal(json(answers[5]).error, 'not_found', 'an unknown path is the API 404, spaces or not')
  }
})

t.test(
  "uWS's idle timeout closes a silent or unfinished client through the front; a normal build has none",
  async (t) => {
    const normal = await bootDevice(t, { dataDir: t.testdir(), variant: 'E' })
    const diagnostic = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
    const front = targets(diagnostic)
    const half = Buffer.from('GET /api/diag/test HTTP/1.1\r\nHo')
    // uWS closes each at its idle timeout (about 10 s) without a word: waited for, together, not slept.
    const waits: [string, Target, Buffer[]][] = [
      [
        'normal build, HTTP: a spaced line',
        targets(normal).http,
        [spaced('/api/diag/test'), spaced('/api/system/status')],
      ],
      ['normal build, HTTPS: a spaced line', targets(normal).https, [spaced('/api/system/status')]],
      ['front, HTTPS: no TLS handshake at all', { port: front.https.port, tls: false }, []],
      ['front, HTTPS: half a head', front.https, [half]],
      ['front, HTTP: half a head', front.http, [half]],
    ]
    const outcomes = await Promise.all(
      waits.map(([, target, steps]) => rawExchange(target, { steps, timeoutMs: 30_000 })),
    )
    outcomes.forEach((outcome, i) => {
      const [what] = waits[i]!
      t.same(outcome.responses, [], `${what}: no answer`)
      t.ok(outcome.closed && !outcome.timedOut, `${what}: closed by the device`)
    })
    const plainDiag = await rawExchange(targets(normal).http, { steps: [plain('/api/diag/test')] })
    t.equal(plainDiag.responses[0]?.status, 404, 'and the normal build has no DIAG route either')
  },
)
