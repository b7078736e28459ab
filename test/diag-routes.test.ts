// The DIAG routes as the gateway serves them (crypto-contract §6): none without `--diag` (the normal
// 404), open to anyone with one (but a present token must be valid), over HTTP and HTTPS, and any
// route's path followed by spaces (`%20`, as the certification scripts send `wipe_config`) routes.
import t from 'tap'
import { call } from './helpers/http.js'
import { bootDevice } from './helpers/device.js'
import { bearer, owned } from './helpers/owner.js'

const DIAG_PATHS = [
  'test',
  'break_temp',
  'break_trng',
  'break_tls',
  'test_trng',
  'disable_selftest',
  'wipe_config',
  'memdump/0/16',
  'corrupt_repo/0',
]

t.test('without --diag every /api/diag/* path is the 404 of an unknown path, and nothing happens', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E' })
  const unknown = await call(`${device.httpUrl}/api/no/such/path`)
  for (const base of [device.httpUrl!, device.httpsUrl!]) {
    for (const path of [...DIAG_PATHS, 'test%20%20']) {
      const answer = await call(`${base}/api/diag/${path}`)
      t.equal(answer.status, 404, `${base.slice(0, 5)} ${path}`)
      t.same(answer.json, unknown.json, 'the same answer as any unknown path')
    }
  }
  // break_tls was asked for (and refused) over both: HTTPS goes on answering.
  for (let i = 0; i < 8; i++) t.equal((await call(`${device.httpsUrl}/api/system/version`)).status, 200)
  t.equal((await call(`${device.httpUrl}/api/system/status`)).json.inited, false, 'wipe_config wiped nothing')
})

t.test('with --diag: test answers an empty 200 to anyone, over HTTP and HTTPS, before personalisation', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  for (const base of [device.httpUrl!, device.httpsUrl!]) {
    const answer = await call(`${base}/api/diag/test`)
    t.equal(answer.status, 200, base)
    t.equal(answer.text, '', 'no body')
    t.equal(answer.headers['content-length'], '0')
  }
  const forged = await call(`${device.httpUrl}/api/diag/test`, { headers: bearer('not.a.token') })
  t.equal(forged.status, 401, 'a present token must still be valid, as on every open route')
  t.equal(forged.json.error, 'invalid_token')
})

t.test('with --diag: open on a personalised device, with or without a token', async (t) => {
  const o = await owned(t, { variant: 'P', boot: { diag: true } })
  t.equal((await call(`${o.https}/api/diag/test`)).status, 200, 'no token')
  t.equal((await call(`${o.https}/api/diag/test`, { headers: bearer(o.token) })).status, 200, 'a valid token')
})

t.test("the DIAG routes reach their service, which checks the parameters (the key store's 400)", async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  for (const path of ['memdump/0x10/16', 'memdump/0/0', 'memdump/-1/16', 'corrupt_repo/7', 'corrupt_repo/1e3']) {
    const answer = await call(`${device.httpUrl}/api/diag/${path}`)
    t.equal(answer.status, 400, path)
    t.equal(answer.json.error, 'bad_request', answer.json.message)
  }
  const dump = await call(`${device.httpUrl}/api/diag/memdump/0/16`)
  t.equal(dump.status, 200)
  t.same({ address: dump.json.address, length: dump.json.length }, { address: 0, length: 16 })
  // A parameter the router decodes is still the service's to judge: `%31%36` is "16".
  t.equal((await call(`${device.httpUrl}/api/diag/memdump/0/%31%36`)).json.length, 16)
  t.equal((await call(`${device.httpUrl}/api/diag/memdump/0`)).status, 404, 'a missing parameter is no route')
  t.equal((await call(`${device.httpUrl}/api/diag/nothing`)).status, 404, 'nor an unknown DIAG name')
  t.equal((await call(`${device.httpUrl}/api/diag/test`, { method: 'POST' })).status, 404, 'GET only')
})

t.test('trailing spaces (%20) after any path route as without them', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  const base = device.httpUrl!
  const test = await call(`${base}/api/diag/test%20%20%20`)
  t.equal(test.status, 200, 'a DIAG route')
  t.equal(test.text, '')
  const version = await call(`${base}/api/system/version`)
  const spaced = await call(`${base}/api/system/version%20%20`)
  t.equal(spaced.status, 200, 'an ordinary route')
  t.same(spaced.json, version.json)
  t.equal((await call(`${base}/api/diag/memdump/0/16%20`)).json.length, 16, 'after a parameter too')
  t.equal((await call(`${base}/api/diag/te%20st`)).status, 404, 'a space inside the path is no trailing space')
  t.equal((await call(`${base}/api/diag/test/%20`)).status, 404, 'nor is a segment of spaces')
})
