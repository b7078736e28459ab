// The DIAG build as the executable runs it: announced wherever a person or an auditor looks, its
// routes served (also by a --split device's processes), and absent from a device without the flag.
import t from 'tap'
import { DIAG_SUFFIX } from '../protocol/diag.js'
import { LogType } from '../protocol/journal.js'
import { call } from './helpers/http.js'
import { hemdBin, runHemd, runToEnd } from './helpers/hemd-process.js'
import { readJournal } from './helpers/journal.js'
import { until } from './helpers/until.js'

async function startupRecords(dataDir: string) {
  return (await readJournal(dataDir)).records.filter((r) => r.type === LogType.STARTUP)
}

t.test('hemd --diag: the banner, the ops log, fwv and the STARTUP record say so; its routes answer', async (t) => {
  const data = `${t.testdir()}/data`
  const hemd = await runHemd(t, ['--data', data, '--diag'])
  t.match(hemd.stdout(), /WARNING: DIAG build/)
  t.match(hemd.stderr(), /"diag":true[^\n]*DIAG build/, 'a warn line in the ops log')
  const version = await call(`${hemd.httpUrl}/api/system/version`)
  t.ok((version.json.fwv as string).endsWith(DIAG_SUFFIX), `fwv ${version.json.fwv as string}`)
  const test = await call(`${hemd.httpUrl}/api/diag/test`)
  t.equal(test.status, 200)
  t.equal(test.text, '', 'an empty answer')
  t.equal((await call(`${hemd.httpsUrl}/api/diag/test`)).status, 200, 'over HTTPS too')
  t.equal(await hemd.interrupt(), 0)
  t.match((await startupRecords(data)).at(-1)?.decoded, { diag: true }, 'the journal tells an auditor')
})

t.test('without --diag: no route, no suffix, nothing in STARTUP', async (t) => {
  const data = `${t.testdir()}/data`
  const hemd = await runHemd(t, ['--data', data])
  t.notMatch(hemd.stdout(), /DIAG/)
  const version = await call(`${hemd.httpUrl}/api/system/version`)
  t.notOk((version.json.fwv as string).endsWith(DIAG_SUFFIX))
  for (const path of ['test', 'break_temp', 'wipe_config', 'memdump/0/32', 'corrupt_repo/0'])
    t.equal((await call(`${hemd.httpUrl}/api/diag/${path}`)).status, 404, path)
  t.equal(await hemd.interrupt(), 0)
  t.notOk(((await startupRecords(data)).at(-1)?.decoded as Record<string, unknown>).diag)
})

t.test('--split --diag: the services in their own processes serve the DIAG operations', async (t) => {
  const hemd = await runHemd(t, ['--data', `${t.testdir()}/data`, '--split', '--diag'])
  t.equal((await call(`${hemd.httpUrl}/api/diag/break_temp`)).status, 200)
  await until('fls_state 0x04', async () => (await call(`${hemd.httpUrl}/api/system/status`)).json.fls_state === 4)
  const trng = await call(`${hemd.httpUrl}/api/diag/test_trng`)
  t.equal(Buffer.from(trng.json.rnd as string, 'base64').length, 8192)
  t.equal(await hemd.interrupt(), 0)
})

t.test('--diag with an installation key refuses to start', async (t) => {
  const refused = await runToEnd(hemdBin, ['--diag', '--dev-keys', '--vendor-key', 'deploy/keys/vendor-dev.pub.pem'])
  t.equal(refused.code, 2)
  t.match(refused.stderr, /never holds an installation's keys/)
})
