// GET /api/system/selftest (crypto-contract §5): the whole answer, who may ask, the fail state, a damaged key record.
import { skippingClock } from './helpers/clock.js'
import { randomBytes } from 'node:crypto'
import t, { type Test } from 'tap'
import { sendSimCommand } from '../cli/hemd/sim-cli.js'
import type { Clock, EntropySource } from '../hal/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import type { SelfTestAnswer } from '../protocol/index.js'
import type { Device } from '../runtime/types.js'
import { bootDevice } from './helpers/device.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { createKey, Tokens } from './helpers/keys.js'
import { bearer, login, owned, personalise } from './helpers/owner.js'

const SLOTS = 1024

/** The skipping clock, moved forward by the test: each self-test gets a second of its own. */
function steppedClock(): Clock & { step(seconds: number): void } {
  const clock = skippingClock()
  return { ...clock, step: (seconds) => clock.advance(seconds * 1000) }
}

function selftest(device: Device, token?: string): Promise<Answer> {
  return call(`${device.httpUrl}/api/system/selftest`, token === undefined ? {} : { headers: bearer(token) })
}

async function selfTestRecords(device: Device) {
  return (await readJournal(device.dataDir)).records.filter((r) => r.type === LogType.SELFTEST_PASSED)
}

/** A 200 answer with exactly §5's fields, each an integer of its kind; returns it. */
function answerOf(t: Test, answer: Answer, variant: 'P' | 'E', what: string): SelfTestAnswer {
  t.equal(answer.status, 200, `${what}: 200 (${answer.text})`)
  const body = answer.json as SelfTestAnswer
  const fields = ['fls_state', 'last_entropytest_ts', 'last_fls_state', 'last_kat_ts', 'last_selftest_ts'] as const
  t.strictSame(
    Object.keys(body).sort(),
    [...fields, 'repo_stats', ...(variant === 'P' ? ['se_state'] : []), 'selftest_ts'],
    `${what}: the fields of §5 (se_state on P only)`,
  )
  for (const field of [...fields, 'selftest_ts'] as const)
    t.ok(Number.isSafeInteger(body[field]) && body[field] >= 0, `${what}: ${field} is an integer (${body[field]})`)
  t.strictSame(
    Object.keys(body.repo_stats).sort(),
    ['deleted', 'fragmented', 'freeslots', 'invalid', 'total'],
    `${what}: repo_stats`,
  )
  if (variant === 'P') t.equal(body.se_state, 0, `${what}: se_state 0, the enclave answers`)
  t.ok(body.last_selftest_ts <= body.selftest_ts, `${what}: the run before came no later`)
  t.ok(body.last_kat_ts >= body.selftest_ts, `${what}: the KATs ran in this run`)
  // A source that failed is not drawn again until the next boot: its tests last ran when it failed.
  if ((body.fls_state & 0x02) === 0)
    t.ok(body.last_entropytest_ts >= body.selftest_ts, `${what}: the entropy tests ran in this run`)
  return body
}

for (const variant of ['P', 'E'] as const) {
  t.test(`${variant}: the whole answer; last_* tell the run before, the boot's start-up tests first`, async (t) => {
    const clock = steppedClock()
    const bootedAt = Math.floor(Date.now() / 1000)
    const device = await bootDevice(t, { dataDir: t.testdir(), variant, clock })
    // A boot on a loaded host takes what it takes: the first tests ran between the start and the device's answer.
    const upAt = Math.floor(clock.now() / 1000)
    clock.step(10)
    const first = answerOf(t, await selftest(device), variant, 'fresh, no token')
    t.ok(first.last_selftest_ts >= bootedAt && first.last_selftest_ts <= upAt, 'the boot ran the first tests')
    t.equal(first.last_fls_state, 0)
    t.equal(first.fls_state, 0)
    t.strictSame(first.repo_stats, { total: 0, deleted: 0, invalid: 0, fragmented: 0, freeslots: SLOTS }, 'no keys')
    clock.step(10)
    const second = answerOf(t, await selftest(device), variant, 'again')
    t.equal(second.last_selftest_ts, first.selftest_ts, 'last_selftest_ts is the run before')
    t.equal(second.selftest_ts - first.selftest_ts >= 10, true, 'selftest_ts is this run')
    t.match(await selfTestRecords(device), [
      { result: LogResult.OK, subject: '', decoded: { source: 200 } },
      { result: LogResult.OK, subject: '', decoded: { source: 200 } },
    ])
  })
}

t.test('any valid token, whatever its scope; none once personalised or a bad one: 401', async (t) => {
  const o = await owned(t, { variant: 'E' })
  const tokens = new Tokens(o.base)
  await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'counted', type: 'AES256' })
  for (const scope of ['logger:get', 'system:config', 'keymgmt:list']) {
    const answer = answerOf(t, await selftest(o.device, await login(o.base, scope)), 'E', scope)
    t.match(answer.repo_stats, { total: 1, invalid: 0, freeslots: SLOTS - 1 }, `${scope}: the key counted`)
  }
  t.equal((await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.FAILED_SCOPE_CHECK).length, 0)
  t.equal((await selftest(o.device)).status, 401, 'no token → 401')
  t.equal((await selftest(o.device, 'not.a.token')).status, 401, 'a bad token → 401')
})

t.test('200 in the fail state: a stuck entropy source shows 0x02, and the next answer remembers it', async (t) => {
  let stuck = false
  const entropy: EntropySource = {
    read: (n) => (stuck ? new Uint8Array(n).fill(0x55) : new Uint8Array(randomBytes(n))),
  }
  const clock = steppedClock()
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', entropy, clock })
  const init = await personalise(device.httpUrl!, 'E')
  t.equal(init.status, 200, init.text)
  stuck = true
  clock.step(10)
  const failed = answerOf(t, await selftest(device, init.json.token), 'E', 'stuck')
  stuck = false
  t.equal(failed.fls_state, 0x02, 'fls_state 0x02')
  t.equal(failed.last_fls_state, 0, 'the run before was secure')
  t.match((await selfTestRecords(device)).at(-1), {
    result: LogResult.FAILED,
    decoded: { source: 200, entropy: 'repetition_count', failed: [] },
  })
  clock.step(10)
  // No login while the device is in the fail state: the token from before still serves.
  const next = answerOf(t, await selftest(device, init.json.token), 'E', 'after')
  t.match(next, { fls_state: 0x02, last_fls_state: 0x02, last_selftest_ts: failed.selftest_ts })
  t.equal(next.last_entropytest_ts, failed.last_entropytest_ts, 'the failed source was not tested again')
})

t.test('a damaged key record: the self-test finds it, fls_state 0x08 in its answer, KEY_INTEGRITY_ERROR', async (t) => {
  const o = await owned(t, { variant: 'P' })
  const tokens = new Tokens(o.base)
  await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'victim', type: 'AES256' })
  await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'bystander', type: 'ED25519' })
  const corrupted = await sendSimCommand(o.device.dataDir, { action: 'corrupt-key' })
  t.match(corrupted, { status: 200, body: { fls_state: 0 } }, 'nothing notices while the keys are in memory')
  const config = await login(o.base, 'system:config')
  const answer = answerOf(t, await selftest(o.device, config), 'P', 'damaged')
  t.equal(answer.fls_state, 0x08, 'the answer shows 0x08')
  t.equal(answer.last_fls_state, 0)
  t.match(answer.repo_stats, { total: 2, invalid: 1 }, 'the damaged record counted invalid')
  const records = (await readJournal(o.device.dataDir)).records
  t.equal(records.filter((r) => r.type === LogType.KEY_INTEGRITY_ERROR).length, 1, 'KEY_INTEGRITY_ERROR once')
  t.match(
    records.filter((r) => r.type === LogType.NON_SECURE_STATE),
    [{ decoded: { raised: 0x08 } }],
  )
  t.match(records.filter((r) => r.type === LogType.SELFTEST_PASSED).at(-1), {
    result: LogResult.FAILED,
    decoded: { source: 200, records: 'damaged' },
  })
  t.equal((await call(`${o.base}/api/system/status`)).json.fls_state, 0x08, 'status shows it')
  const again = answerOf(t, await selftest(o.device, config), 'P', 'again')
  t.match(again, { fls_state: 0x08, last_fls_state: 0x08 })
  t.equal(
    (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.KEY_INTEGRITY_ERROR).length,
    1,
    'journaled once: the record was known bad',
  )
})
