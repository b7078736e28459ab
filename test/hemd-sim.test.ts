// `hemd sim`: fault injection into a running simulated device, as a user runs it.
import t from 'tap'
import { parseSimCommand } from '../cli/hemd/sim-cli.js'
import { parseHemdArgs } from '../cli/hemd/hemd-cli.js'
import { call } from './helpers/http.js'
import { hemdBin, runHemd, runToEnd } from './helpers/hemd-process.js'
import { until } from './helpers/until.js'

t.test('commands and their arguments', async (t) => {
  t.same(parseSimCommand(['temperature', '95']), { action: 'temperature', celsius: 95 })
  t.same(parseSimCommand(['temperature', '-50.5']), { action: 'temperature', celsius: -50.5 })
  t.same(parseSimCommand(['temperature', 'normal']), { action: 'temperature', celsius: null })
  t.same(parseSimCommand(['entropy', 'ok']), { action: 'entropy', fault: 'none' })
  t.same(parseSimCommand(['entropy', 'biased']), { action: 'entropy', fault: 'biased' })
  t.same(parseSimCommand(['disk', 'full']), { action: 'disk', full: true })
  t.same(parseSimCommand(['disk', 'free']), { action: 'disk', full: false })
  t.same(parseSimCommand(['format', 'middle']), { action: 'format', hold: 'middle' })
  t.same(parseSimCommand(['format', 'go']), { action: 'format', hold: null })
  t.same(parseSimCommand(['corrupt', 'journal']), { action: 'corrupt-journal' })
  t.same(parseSimCommand(['corrupt', 'key']), { action: 'corrupt-key' })
  t.same(parseSimCommand(['status']), { action: 'status' })
  for (const bad of [
    [],
    ['warp'],
    ['temperature'],
    ['temperature', 'hot'],
    ['temperature', '1e9'],
    ['entropy', 'none'],
    ['disk'],
    ['corrupt', 'disk'],
    ['format'],
    ['format', 'halfway'],
    ['status', 'now'],
    ['disk', 'full', 'now'],
  ]) {
    t.throws(() => parseSimCommand(bad), Error, bad.join(' ') || '(nothing)')
  }
  t.match(parseHemdArgs(['--temp-range=-10:60']), { temperatureRange: { min: -10, max: 60 } })
  t.notOk('temperatureRange' in (parseHemdArgs([]) as object), "the default range is the device's")
  for (const bad of ['10', '10:12', 'a:b', '10:-10', '1000:2000'])
    t.throws(() => parseHemdArgs(['--temp-range', bad]), { name: 'UsageError' }, bad)
})

t.test(
  'hemd sim against a running hemd: answers with the fail state it caused; usage and unreachable devices are clear',
  async (t) => {
    const data = `${t.testdir()}/data`
    const sim = (...args: string[]) => runToEnd(hemdBin, ['sim', '--data', data, ...args])
    const none = await sim('status')
    t.equal(none.code, 1)
    t.match(none.stderr, /no simulated device has run/)

    const hemd = await runHemd(t, ['--data', data, '--variant', 'E', '--temp-range', '0:60'])
    const hot = await sim('temperature', '61')
    t.equal(hot.code, 0, hot.stderr)
    t.same(JSON.parse(hot.stdout), { fls_state: 4 })
    t.equal((await call(`${hemd.httpUrl}/api/system/status`)).json.fls_state, 4)
    t.same(JSON.parse((await sim('temperature', 'normal')).stdout), { fls_state: 0 })
    const usage = await sim('entropy', 'wobbly')
    t.equal(usage.code, 2)
    t.match(usage.stderr, /entropy takes stuck, biased or ok/)
    t.match((await runToEnd(hemdBin, ['sim', '--help'])).stdout, /corrupt journal/)
    const refused = await sim('corrupt', 'key')
    t.equal(refused.code, 1, 'no key to corrupt: the device says so')
    t.match(refused.stdout, /no_key/)

    t.equal(await hemd.interrupt(), 0)
    const gone = await sim('status')
    t.equal(gone.code, 1)
    t.match(gone.stderr, /cannot be reached/)
  },
)

t.test('with --split the faults reach every service process', async (t) => {
  const data = `${t.testdir()}/data`
  const hemd = await runHemd(t, ['--data', data, '--split', '--variant', 'E'])
  const stuck = await runToEnd(hemdBin, ['sim', '--data', data, 'entropy', 'stuck'])
  t.same(JSON.parse(stuck.stdout), { fls_state: 2 }, 'the system process found it')
  t.match(
    await call(`${hemd.httpUrl}/api/auth/token`),
    { status: 409 },
    'and the auth process draws from the same broken source',
  )
  await runToEnd(hemdBin, ['sim', '--data', data, 'entropy', 'ok'])
  await until(
    'still 0x02: it holds until a reboot',
    async () => (await call(`${hemd.httpUrl}/api/system/status`)).json.fls_state === 2,
  )
  t.equal(await hemd.interrupt(), 0)
})
