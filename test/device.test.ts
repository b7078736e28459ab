import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { HalLockedError } from '../hal/errors.js'
import { LogType } from '../protocol/journal.js'
import { bootDevice, builtFirmware } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'

const B64 = /^[A-Za-z0-9+/]+={0,2}$/

t.test('P: version and status over HTTP and HTTPS', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir() })
  const firmware = await builtFirmware()
  for (const base of [device.httpUrl!, device.httpsUrl!]) {
    const version = await call(`${base}/api/system/version`)
    t.equal(version.status, 200)
    t.equal(version.headers['content-type'], 'application/json')
    t.match(version.json.hwv, /PPA/)
    t.equal(version.json.fwv, firmware.version)
    t.equal(version.json.fwk, Buffer.from(firmware.publicKey).toString('base64'))
    t.equal(version.json.fws, Buffer.from(firmware.signature).toString('base64'))
    for (const field of ['blk', 'bls']) t.match(version.json[field], B64, field)
    t.type(version.json.blv, 'string')
    t.notOk('sd_csd' in version.json, 'sd_csd only with a valid token')

    const before = Math.floor(Date.now() / 1000)
    const status = await call(`${base}/api/system/status`)
    t.equal(status.status, 200)
    const s = status.json
    t.equal(s.fls_state, 0)
    t.equal(s.ctx, 0)
    t.equal(s.inited, false, 'a fresh device says so')
    t.type(s.temp, 'number')
    t.type(s.uptime, 'number')
    t.match(s.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    t.ok(s.time >= before && s.time <= Date.now() / 1000, 'time: the Unix second of the answer')
    t.match(s.storage, [/^\d+:-$/, /^\d+:-$/])
    t.equal(s.hostname, 'hem.local', 'the Host 127.0.0.1 differs from the configured hostname')
    t.equal('https' in s, base.startsWith('http:'), '`https` only over plain HTTP')
  }
})

t.test('E: no storage, no P-only fields, EPA', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E' })
  const version = await call(`${device.httpUrl}/api/system/version`)
  t.match(version.json.hwv, /EPA/)
  const status = await call(`${device.httpsUrl}/api/system/status`)
  t.equal(status.status, 200)
  t.notOk('storage' in status.json)
  t.notOk('https' in status.json)
})

t.test('transport rules on a real device', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir() })
  t.equal((await call(`${device.httpUrl}/api/nope`)).status, 404)
  t.equal(
    (await call(`${device.httpUrl}/api/system/status`, { headers: { authorization: 'Bearer x.y.z' } })).status,
    401,
  )
  // A fresh device admits no page but its own (its configured origin comes with personalisation).
  const options = await call(`${device.httpUrl}/api/system/status`, {
    method: 'OPTIONS',
    headers: { origin: device.httpUrl! },
  })
  t.equal(options.status, 204)
  t.equal(options.headers['access-control-allow-origin'], device.httpUrl)
  const big = await call(`${device.httpUrl}/api/system/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: `{"a":"${'x'.repeat(7400)}"}`,
  })
  t.equal(big.status, 413)
  t.same(Object.keys(big.json), ['error', 'message'])
})

t.test(
  'the journal: STARTUP, the lifecycle, SHUTDOWN, sealed, verified; a second boot links to the first',
  async (t) => {
    const dataDir = t.testdir()
    const first = await bootDevice(t, { dataDir })
    await first.stop()
    const second = await bootDevice(t, { dataDir })
    await second.stop()
    t.same(first.logPublicKey, second.logPublicKey, "the log key is the enclave's, kept across boots")

    const result = await verifyDataDir(dataDir, first.logPublicKey)
    t.same(result.problems, [])
    t.ok(result.ok)
    const { files, records } = await readJournal(dataDir)
    t.equal(files.length, 2, 'one file per boot')
    for (const file of files) {
      const types = records.filter((r) => r.file === file.id).map((r) => r.type)
      t.same(types, [
        LogType.KEY_INIT,
        LogType.LINK,
        LogType.STARTUP,
        LogType.TRANSITION,
        LogType.TRANSITION,
        LogType.SHUTDOWN,
        LogType.SEAL,
      ])
    }
    const link = records.find((r) => r.file === files[1]!.id && r.type === LogType.LINK)!
    t.equal(link.decoded?.prev, files[0]!.id, 'the second file links to the first')
    const transitions = records.filter((r) => r.type === LogType.TRANSITION).map((r) => r.decoded)
    t.same(transitions[0], { machine: 'lifecycle', version: 1, from: 'booting', to: 'running', event: 'READY' })
    t.same(transitions[1], { machine: 'lifecycle', version: 1, from: 'running', to: 'stopped', event: 'STOP' })
    t.equal(records.filter((r) => r.type === LogType.SEAL).at(-1)!.decoded?.reason, 'close')
  },
)

t.test('a second device on the same data dir refuses to start', async (t) => {
  const dataDir = t.testdir()
  await bootDevice(t, { dataDir })
  await t.rejects(bootDevice(t, { dataDir }), HalLockedError)
  await t.rejects(bootDevice(t, { dataDir }), new RegExp(`pid ${process.pid}`))
})

t.test('a device pointed at a bad TLS pair refuses to start', async (t) => {
  const dir = t.testdir({ 'c.pem': 'not a cert', 'k.pem': 'not a key' })
  await t.rejects(
    bootDevice(t, { dataDir: `${dir}/data`, tls: { certFile: `${dir}/c.pem`, keyFile: `${dir}/k.pem` } }),
    /not a PEM or DER X.509/,
  )
})

t.test('a journal tampered with while the device was off raises fls_state 0x08 at the next boot', async (t) => {
  const dataDir = t.testdir()
  const first = await bootDevice(t, { dataDir })
  await first.stop()
  const { files } = await readJournal(dataDir)
  const path = `${dataDir}/journal/${files[0]!.id}.log`
  const text = Buffer.from(files[0]!.bytes).toString('utf8')
  // Flip the STARTUP record's result: the line still parses, but its MAC and the chain break.
  await writeFile(path, text.replace(/\n(2\|[0-9a-f]+\|1\|)0\|/, '\n$12|'))
  const second = await bootDevice(t, { dataDir })
  const status = await call(`${second.httpUrl}/api/system/status`)
  t.equal(status.json.fls_state, 0x08)
  await second.stop()
  const { records } = await readJournal(dataDir)
  const startup = records.filter((r) => r.type === LogType.STARTUP).at(-1)!
  t.equal(startup.result, 2, 'the boot is journaled as an ERROR')
  t.equal(startup.decoded?.fls, 0x08)
  const lifecycle = records.filter((r) => r.type === LogType.TRANSITION).map((r) => r.decoded?.to)
  t.same(lifecycle.slice(-2), ['failed', 'stopped'])
})

t.test('a second device on a port already in use refuses to start instead of sharing it', async (t) => {
  // One testdir: a second call would empty it under the first device.
  const dir = t.testdir()
  const first = await bootDevice(t, { dataDir: `${dir}/one` })
  const port = Number(new URL(first.httpUrl!).port)
  await t.rejects(
    bootDevice(t, { dataDir: `${dir}/two`, http: { host: '127.0.0.1', port } }),
    /cannot listen on 127\.0\.0\.1:\d+/,
  )
  t.equal((await call(`${first.httpUrl}/api/system/status`)).status, 200, 'the first one is untouched')
})
