// GET /metrics (docs/metrics.md): a token of scope system:metrics (U or M) opens it; the series the issue names are
// there, by route pattern; no KID, token or passphrase shows, whatever the device went through.
import t from 'tap'
import { LogResult, LogType } from '../protocol/journal.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { api, createKey } from './helpers/keys.js'
import { valueOf } from './helpers/metrics.js'
import { bearer, login, loginAnswer, MASTER_PASS, owned, USER_PASS } from './helpers/owner.js'

const WRONG_PASS = 'not the passphrase of anyone here'

/** Every series the issue lists (item 4), by a name each. */
const SERIES = [
  'hem_http_requests_total',
  'hem_http_request_duration_seconds_bucket',
  'hem_bus_envelopes_sent_total',
  'hem_bus_envelopes_received_total',
  'hem_bus_batch_size_commands_bucket',
  'hem_journal_records_appended_total',
  'hem_journal_seals_total',
  'hem_journal_fsync_seconds_bucket',
  'hem_key_slots_used',
  'hem_key_slots_free',
  'hem_fls_state_bit',
  'hem_temperature_celsius',
  'hem_entropy_healthy',
  'hem_mirror_state',
  'hem_mirror_lag_records',
  'hem_mirror_lag_seconds',
  'hem_login_failures_total',
  'hem_login_queue_depth',
  'hem_process_resident_memory_bytes',
  'hem_nodejs_heap_size_used_bytes',
  'hem_nodejs_eventloop_lag_seconds',
]

t.test('GET /metrics: the scope opens it, the series are there, and nothing secret is', async (t) => {
  const o = await owned(t)
  const kid = await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'metered', type: 'AES256' })
  t.equal((await api(`${o.https}/api/keymgmt/get/${kid}`, await login(o.base, 'keymgmt:get'))).status, 200)
  t.equal((await loginAnswer(o.base, 'keymgmt:list', WRONG_PASS)).status, 401, 'a login with a wrong passphrase')

  const token = await login(o.base, 'system:metrics')
  const answer = await call(`${o.base}/metrics`, { headers: bearer(token) })
  t.equal(answer.status, 200)
  t.equal(answer.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8', "prom-client's content type")
  const text = answer.text
  for (const name of SERIES) t.ok(valueOf(text, name) !== undefined, `${name} is there`)
  t.equal(valueOf(text, 'hem_key_slots_used'), 1, 'the key created takes a slot')
  t.equal(valueOf(text, 'hem_login_failures_total', { kind: 'passphrase' }), 1, 'the failed login is counted')
  t.equal(valueOf(text, 'hem_fls_state_bit', { bit: 'ENTROPY' }), 0)
  t.equal(valueOf(text, 'hem_entropy_healthy'), 1)
  t.equal(valueOf(text, 'hem_mirror_state', { state: 'none' }), 1, 'no fleet backend: no mirror')
  t.equal(valueOf(text, 'hem_mirror_lag_records'), 0, 'so no lag')
  t.ok(valueOf(text, 'hem_journal_records_appended_total', { process: 'hemd' })! > 0, 'the journal was written')
  t.equal(
    valueOf(text, 'hem_http_requests_total', { route: '/api/keymgmt/get/:kid', method: 'GET', status: '200' }),
    1,
    'the key read counts under its route pattern',
  )
  for (const secret of [kid, kid.toLowerCase(), token, USER_PASS, WRONG_PASS, o.token, o.device.devid])
    t.notOk(text.includes(secret), `no ${secret.slice(0, 12)}… in the output`)

  const master = await login(o.base, 'system:metrics', MASTER_PASS)
  t.equal((await call(`${o.base}/metrics`, { headers: bearer(master) })).status, 200, 'the master role too')
})

t.test('GET /metrics: no token 401, another scope 403 (journaled)', async (t) => {
  const o = await owned(t)
  t.equal((await call(`${o.base}/metrics`)).status, 401)
  const other = await login(o.base, 'logger:get')
  t.equal((await call(`${o.base}/metrics`, { headers: bearer(other) })).status, 403)
  const { records } = await readJournal(o.device.dataDir)
  const failures = records.filter((r) => r.type === LogType.FAILED_SCOPE_CHECK)
  t.same(
    failures.map((r) => [r.result, r.subject, r.decoded?.scope]),
    [[LogResult.FAILED, 'U', 'logger:get']],
  )
})
