// Refused logins are journaled (issue 22 item 10), a flood of them as one record per window with
// its count, the stranger's scope cut to 64 characters.
import t from 'tap'
import { FailedLoginAudit } from '../actors/auth/failed-login-audit.js'
import { buildLoginEjwt } from '../client/index.js'
import { LogResult, LogType, type JournalEntry } from '../protocol/journal.js'
import { manualClock } from './helpers/clock.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { silentLogger } from './helpers/logger.js'
import { keys, loginAnswer, owned, USER_PASS } from './helpers/owner.js'

const json = { 'content-type': 'application/json' }

const failedLogins = (records: { type: number; result: number; decoded?: Record<string, unknown> }[]) =>
  records
    .filter((r) => r.type === LogType.AUTH_SUCCESS_INTERNAL && r.result === LogResult.FAILED)
    .map((r) => r.decoded!)

t.test('a wrong passphrase and a malformed scope are journaled FAILED with the scope and the request id', async (t) => {
  const { device, base } = await owned(t)
  const wrong = await loginAnswer(base, 'keymgmt:list', 'not the passphrase')
  t.equal(wrong.status, 401)

  const challenge = (await call(`${base}/api/auth/token`)).json
  const key = await keys.get(USER_PASS, challenge.eid)
  const scope = `system:config:${'x'.repeat(300)}`
  const unknown = await call(`${base}/api/auth/token`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ auth: buildLoginEjwt(key, challenge, scope, 3600) }),
  })
  t.equal(unknown.status, 400, 'a scope longer than 255 characters')
  t.match(unknown.json, { error: 'bad_request', message: /scope/ })
  const ok = await loginAnswer(base, 'keymgmt:use:00112233445566778899AABBCCDDEEFF')
  t.equal(ok.status, 200, 'a key scope with a KID: no refusal to journal')

  const { records } = await readJournal(device.dataDir)
  t.same(failedLogins(records), [
    { source: 401, scope: 'keymgmt:list', rid: wrong.headers['x-request-id'], count: 1 },
    { source: 400, scope: scope.slice(0, 64), rid: unknown.headers['x-request-id'], count: 1 },
  ])
  const text = JSON.stringify(records)
  t.notOk(
    text.includes(challenge.jti) || text.includes(Buffer.from(key.publicKey).toString('base64')),
    'nothing of the eJWT',
  )
})

t.test('a flood is journaled as one record per status and window, with its count, flushed at stop', async (t) => {
  const { device, base } = await owned(t)
  const answers = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      call(`${base}/api/auth/token`, { method: 'POST', headers: json, body: JSON.stringify({ auth: `junk.${i}` }) }),
    ),
  )
  const byStatus = new Map<number, number>()
  for (const { status } of answers) byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
  t.ok((byStatus.get(429) ?? 0) >= 150, 'most were turned away')
  await device.stop()

  const records = failedLogins((await readJournal(device.dataDir)).records)
  for (const [status, refused] of byStatus) {
    const mine = records.filter((r) => r.source === status)
    t.equal(
      mine.reduce((sum, r) => sum + (r.count as number), 0),
      refused,
      `${status}: every refusal counted`,
    )
    // The flood took well under a minute: at most one record per 10 s window besides the first.
    t.ok(mine.length <= 7, `${status}: ${mine.length} records for ${refused} refusals`)
  }
})

t.test('the window: the first at once, the rest counted into one record when it ends', async (t) => {
  const clock = manualClock()
  const journaled: JournalEntry[] = []
  const audit = new FailedLoginAudit({ journal: async (e) => void journaled.push(...e), logger: silentLogger, clock })
  const data = () => journaled.map((e) => [e.type, e.result, e.subject, e.data])
  const entry = (source: number, rid: string, count: number, scope?: string) => [
    LogType.AUTH_SUCCESS_INTERNAL,
    LogResult.FAILED,
    undefined,
    { source, ...(scope ? { scope } : {}), rid, count },
  ]

  await audit.refused({ status: 401, rid: 'r1', scope: 'system:config' })
  for (let i = 2; i <= 5; i++) await audit.refused({ status: 401, rid: `r${i}` })
  await audit.refused({ status: 429, rid: 'q1' })
  t.same(data(), [entry(401, 'r1', 1, 'system:config'), entry(429, 'q1', 1)], 'one at once per status')
  t.same(clock.armed(), [10_000, 10_000], 'each opens a window of 10 s')

  clock.advance(9_999)
  t.equal(journaled.length, 2, 'nothing more before the windows end')
  clock.advance(1)
  await Promise.resolve()
  t.same(data().slice(2), [entry(401, 'r2', 4)], 'the window of 401 ends: its four in one record')
  t.equal(journaled.length, 3, 'a window that counted nothing writes nothing')
  t.same(clock.armed(), [10_000], '401 opens its next window, 429 none')

  await audit.refused({ status: 401, rid: 'r6' })
  await audit.refused({ status: 429, rid: 'q2' })
  t.same(data().slice(3), [entry(429, 'q2', 1)], "429's window had closed: at once; 401's next window counts")
  await audit.flush()
  t.same(data().slice(4), [entry(401, 'r6', 1)], 'at stop, what the open windows counted')
  t.same(clock.armed(), [], 'and they are closed')
})
