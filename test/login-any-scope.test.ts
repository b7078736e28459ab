// Issue 35 item 1: a login takes any scope of the family's form (1–255 printable ASCII characters,
// no space), as the family's certification expects (it logs in with `system:wrong` and
// `system:reboot` and wants a token, then a 403 where the token does not fit). The token opens
// only what the access rules match; the journal, and hem-audit's timeline of it, tell the scope as
// asked. Every other login rule (roles, lifetimes) holds as for a scope the rules name.
import { join } from 'node:path'
import t from 'tap'
import { main as hemAudit } from '../cli/hem-audit/audit-cli.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { runCli } from './helpers/cli-output.js'
import { skippingClock } from './helpers/clock.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { bearer, login, loginAnswer, MASTER_PASS, owned } from './helpers/owner.js'

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'))

/** The 94 printable ASCII characters but the space, repeated to the form's longest scope. */
const LONGEST = String.fromCharCode(...Array.from({ length: 255 }, (_, i) => 0x21 + (i % 94)))

t.test('a scope that names nothing: a token carrying it, opening only what the rules match', async (t) => {
  // The brake's floors pass at once on this clock: this test is about scopes, login.test.ts times the brake.
  const { device, base } = await owned(t, { boot: { clock: skippingClock() } })
  const now = Math.floor(Date.now() / 1000)

  const wrong = await loginAnswer(base, 'system:wrong')
  t.equal(wrong.status, 200, 'system:wrong: a token')
  t.match(claimsOf(wrong.json.token), { scope: 'system:wrong', sub: 'U' }, 'carrying the scope as asked')
  const reboot = await login(base, 'system:reboot')
  t.equal(claimsOf(reboot).scope, 'system:reboot')
  const longest = await loginAnswer(base, LONGEST)
  t.equal(longest.status, 200, '255 printable characters: a token')
  t.equal(claimsOf(longest.json.token).scope, LONGEST, 'carrying all of them')

  // Roles and lifetimes as for any scope: the master's passphrase gives M, a day at most.
  const master = await login(base, 'system:wrong', MASTER_PASS, now + 3 * 24 * 3600)
  const { sub, iat, exp } = claimsOf(master)
  t.equal(sub, 'M', "the master's passphrase: role M")
  t.equal(exp - iat, 24 * 3600, 'a lifetime asked beyond a day is cut to one')

  // Refused where the rules do not match it, and journaled FAILED_SCOPE_CHECK with the scope as asked.
  const refusals: [string, string, string][] = [
    ['GET', '/api/system/config', wrong.json.token],
    ['GET', '/api/logger/key', wrong.json.token],
    ['GET', '/api/system/shutdown', wrong.json.token],
    // The contract's reboot scopes are system:config and system:upgrade; system:reboot names neither.
    ['GET', '/api/system/reboot', reboot],
    ['GET', '/api/system/upgrade/check_fw', master],
  ]
  for (const [method, path, token] of refusals) {
    const answer = await call(`${base}${path}`, { method, headers: bearer(token) })
    t.equal(answer.status, 403, `${claimsOf(token).scope} on ${path}: 403`)
    const { records } = await readJournal(device.dataDir)
    const record = records.find(
      (r) => r.type === LogType.FAILED_SCOPE_CHECK && r.decoded?.rid === answer.headers['x-request-id'],
    )
    t.match(record, { result: LogResult.FAILED, decoded: { source: 403, scope: claimsOf(token).scope } }, 'journaled')
  }
  // What takes any valid token takes these too: the longest, quotes and backslashes included, as well.
  for (const token of [wrong.json.token, longest.json.token]) {
    const selftest = await call(`${base}/api/system/selftest`, { headers: bearer(token) })
    t.equal(selftest.status, 200, `${claimsOf(token).scope.slice(0, 20)}: selftest`)
  }
  const config = await call(`${base}/api/system/config`, { headers: bearer(longest.json.token) })
  t.equal(config.status, 403, 'the longest scope: 403 where it does not fit')
  const status = await call(`${base}/api/system/status`, { headers: bearer(reboot) })
  t.equal(status.status, 200)
  t.ok('repo_stats' in status.json, 'status shows repo_stats to any valid token')

  const logins = (await readJournal(device.dataDir)).records
    .filter((r) => r.type === LogType.AUTH_SUCCESS_INTERNAL && r.result === LogResult.OK)
    .map((r) => [r.subject, r.decoded?.scope])
  t.same(
    logins,
    [
      ['U', 'system:wrong'],
      ['U', 'system:reboot'],
      ['U', LONGEST],
      ['M', 'system:wrong'],
    ],
    'each login journaled with its scope whole, as asked',
  )

  // The auditor's view of it: the log key, then the files sealed by the stop.
  const key = (await call(`${base}/api/logger/key`, { headers: bearer(await login(base, 'logger:get')) })).json.key
  await device.stop()
  const told = await runCli(hemAudit, ['timeline', '--key', key, join(device.dataDir, 'journal')])
  t.equal(told.code, 0, told.stderr)
  const squeezed = told.stdout.replace(/ +/g, ' ')
  t.match(squeezed, ' user login OK 200 scope=system:wrong rid=')
  t.match(squeezed, ' master login OK 200 scope=system:wrong rid=')
  t.match(squeezed, ' user scope check failed FAILED 403 scope=system:reboot rid=')
  // Text is shown at most 80 characters long, whatever its record holds.
  t.match(squeezed, ` user login OK 200 scope=${LONGEST.slice(0, 80)}… rid=`)
})

t.test('the form: empty, longer than 255, a space or a control character is 400', async (t) => {
  const { device, base } = await owned(t, { boot: { clock: skippingClock() } })
  const malformed = ['', 'x'.repeat(256), `${LONGEST}x`, 'system: wrong', 'system:wrong\n', 'system:\u0000', 'système']
  for (const scope of malformed) {
    const answer = await loginAnswer(base, scope)
    t.equal(answer.status, 400, `${JSON.stringify(scope.slice(0, 40))}: 400`)
    t.match(answer.json, { error: 'bad_request', message: /`scope`/ })
  }
  t.equal((await loginAnswer(base, 'system:wrong')).status, 200, 'and a scope of the form still logs in')
  const refused = (await readJournal(device.dataDir)).records.filter(
    (r) => r.type === LogType.AUTH_SUCCESS_INTERNAL && r.result === LogResult.FAILED,
  )
  t.match(refused[0]?.decoded, { source: 400, scope: '' }, 'the first refusal journaled at once, its scope as sent')
})
