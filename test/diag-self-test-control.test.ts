// The DIAG routes that steer the self-test and read the entropy source (crypto-contract §6):
// disable_selftest stops the periodic self-test until the next boot, asked ones still run;
// test_trng hands out 8192 raw bytes of the source.
import t from 'tap'
import { DEFAULT_SELF_TEST_INTERVAL_MS } from '../actors/system/self-test-runner.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { manualClock } from './helpers/clock.js'
import { bootDevice } from './helpers/device.js'
import { diagOk, rebootOver, selfTest } from './helpers/diag.js'
import { readJournal } from './helpers/journal.js'
import { login, owned } from './helpers/owner.js'
import { until } from './helpers/until.js'

async function selfTests(dataDir: string, source: 'periodic' | 200): Promise<number> {
  const { records } = await readJournal(dataDir)
  return records.filter((r) => r.type === LogType.SELFTEST_PASSED && r.decoded?.source === source).length
}

t.test('disable_selftest: no periodic self-test until the next boot; an asked one still runs', async (t) => {
  // The device's clock moves on only when the test says: no wall clock decides when the self-test runs.
  const clock = manualClock()
  const o = await owned(t, { boot: { diag: true, clock } })
  const dataDir = o.device.dataDir
  // Before the device's clock runs ahead of the host's: the login's iat would be too old for it then.
  const config = await login(o.base, 'system:config')
  const period = DEFAULT_SELF_TEST_INTERVAL_MS
  t.ok(clock.armed().includes(period), 'the boot armed the periodic self-test')
  clock.advance(period)
  await until('the periodic self-test journaled', async () => (await selfTests(dataDir, 'periodic')) === 1)

  const off = await diagOk(o.base, 'disable_selftest')
  t.equal(off.text, '', 'an empty 200')
  const changes = (await readJournal(dataDir)).records.filter((r) => r.type === LogType.CONFIG_UPDATED)
  t.match(
    changes.at(-1),
    {
      result: LogResult.OK,
      decoded: { source: 200, rid: off.headers['x-request-id'], periodic_selftest: false, diag: true },
    },
    'journaled as a configuration change, with the request id of its answer',
  )
  t.notOk(clock.armed().includes(period), 'its timer is cancelled')
  clock.advance(period)
  t.equal((await selfTest(o.base, config)).status, 200, 'an asked self-test runs')
  t.equal(await selfTests(dataDir, 200), 1, 'and is journaled')
  t.equal(await selfTests(dataDir, 'periodic'), 1, 'no periodic one since')

  await rebootOver(o.base, dataDir, config)
  t.ok(clock.armed().includes(period), 'the next boot arms it again')
  clock.advance(period)
  await until('periodic again after the reboot', async () => (await selfTests(dataDir, 'periodic')) === 2)
})

t.test('test_trng: 8192 raw bytes in standard base64, over HTTP and HTTPS, never the same', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  const samples: Buffer[] = []
  for (const base of [device.httpUrl!, device.httpsUrl!]) {
    const { json } = await diagOk(base, 'test_trng')
    t.match(json.rnd, /^[A-Za-z0-9+/]+={0,2}$/, 'standard base64, padded')
    t.equal(json.rnd.length % 4, 0)
    const bytes = Buffer.from(json.rnd as string, 'base64')
    t.equal(bytes.length, 8192)
    t.ok(new Set(bytes).size > 200, `not constant: ${new Set(bytes).size} distinct byte values`)
    samples.push(bytes)
  }
  t.not(samples[0]!.toString('hex'), samples[1]!.toString('hex'), 'two samples differ')
})
