// Reboot and shutdown over the API: every token dies, a new journal file starts, identity and
// configuration come back from the journal; and the gateway's token cache never outlives the
// auth actor that vouched for its entries.
import t from 'tap'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { LogResult, LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { tryCall } from './helpers/try-call.js'
import { rawExchange, requestHead } from './helpers/raw-http.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'
import { MASTER_PASS, bearer, login, owned, personalise } from './helpers/owner.js'
import { until } from './helpers/until.js'

async function journalFiles(dataDir: string): Promise<number> {
  return (await readJournal(dataDir)).files.length
}

/**
 * Waits until the device answers again from a boot that started journal file number `files`.
 * Refused connections count as "not yet" (tryCall); a journal that cannot be read fails at once.
 */
async function backUp(base: string, dataDir: string, files: number, ms?: number): Promise<void> {
  await until(
    `boot with journal file ${files}`,
    async () => {
      if ((await journalFiles(dataDir)) < files) return false
      const answer = await tryCall(`${base}/api/system/status`)
      return typeof answer !== 'string' && answer.status === 200
    },
    { rethrow: true, ...(ms ? { ms } : {}) },
  )
}

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>

t.test(
  'reboot: every token dies, a new journal file starts, identity and configuration come back from the journal',
  async (t) => {
    const {
      device,
      base,
      token: initToken,
      instanceid,
    } = await owned(t, { cfg: { user: 'Lin', hostname: 'hsm.lab', origin: '*' } })
    const token = await login(base, 'system:config')
    const masterToken = await login(base, 'system:config', MASTER_PASS)
    const before = (await call(`${base}/api/auth/token`)).json
    const configBefore = (await call(`${base}/api/system/config`, { headers: bearer(token) })).json
    t.equal(await journalFiles(device.dataDir), 1)

    t.equal((await call(`${base}/api/system/reboot`)).status, 401, 'reboot needs a token')
    t.equal(
      (await call(`${base}/api/system/reboot`, { headers: bearer(await login(base, 'system:shutdown')) })).status,
      403,
      'and the right scope',
    )
    const reboot = await call(`${base}/api/system/reboot`, { headers: bearer(token) })
    t.equal(reboot.status, 200, 'the reboot is answered first')
    await backUp(base, device.dataDir, 2)

    const status = (await call(`${base}/api/system/status`)).json
    t.notOk('inited' in status, 'still personalised: `inited` absent')
    t.equal(status.fls_state, 0)
    for (const [what, old] of [
      ['the login token', token],
      ['the master token', masterToken],
      ['the init token', initToken],
    ] as const) {
      for (const path of ['/api/system/status', '/api/system/version', '/api/system/config']) {
        t.equal((await call(`${base}${path}`, { headers: bearer(old) })).status, 401, `${what} is dead on ${path}`)
      }
    }
    t.equal((await call(`${base}/api/auth/init`)).status, 406, 'personalisation rebuilt from the journal')

    const after = (await call(`${base}/api/auth/token`)).json
    t.not(after.spk, before.spk, 'a new session key')
    t.equal(after.eid, before.eid, 'the same device identity')
    t.equal(after.lbl, 'Lin', 'the user name rebuilt from the journal')
    const fresh = await login(base, 'system:config')
    t.not(fresh, token)
    const config = await call(`${base}/api/system/config`, { headers: bearer(fresh) })
    t.equal(config.status, 200)
    t.match(config.json, { user: 'Lin', hostname: 'hsm.lab', origin: '*', email: 'ada@example.com', instanceid })
    const comparable = (c: Record<string, unknown>) => {
      const { spk: _spk, nonce: _nonce, ...rest } = c
      return rest
    }
    t.same(comparable(config.json), comparable(configBefore), 'the whole configuration, but the per-boot spk and nonce')
    t.not(config.json.spk, configBefore.spk)
    t.equal(claimsOf(await login(base, 'system:config', MASTER_PASS)).sub, 'M', 'both keys rebuilt')

    const { files, records } = await readJournal(device.dataDir)
    t.equal(files.length, 2, 'one journal file per boot')
    const [first, second] = files.map((f) => f.id) as [string, string]
    const reboots = records.filter((r) => r.type === LogType.REBOOT)
    t.same(
      reboots.map((r) => [r.file, r.result, r.subject, r.decoded?.source]),
      [[first, LogResult.OK, 'U', 200]],
      'REBOOT journaled by who asked, in the old file',
    )
    const startups = records.filter((r) => r.type === LogType.STARTUP).map((r) => r.file)
    t.same(startups, [first, second], 'STARTUP in each file')
    t.same(
      records.filter((r) => r.type === LogType.SHUTDOWN).map((r) => [r.file, r.subject]),
      [[first, '']],
      'the old boot ended with SHUTDOWN (nobody asked for a shutdown: REBOOT says who asked)',
    )
    const link = records.find((r) => r.file === second && r.type === LogType.LINK)
    t.equal(link?.decoded?.prev, first, 'the new file links to the old one')
    t.notMatch(
      Buffer.concat(files.map((f) => f.bytes)).toString('utf8'),
      token.split('.')[2]!,
      'no token in the journal',
    )
    const verified = await verifyDataDir(device.dataDir, device.logPublicKey, true)
    t.ok(verified.ok, JSON.stringify(verified.problems))
    t.equal(verified.summary.files, 2)
  },
)

t.test('reboot twice in quick succession, the second with a system:upgrade token', async (t) => {
  const { device, base } = await owned(t)
  for (const [files, scope] of [
    [2, 'system:config'],
    [3, 'system:upgrade'],
  ] as const) {
    const token = await login(base, scope)
    t.equal((await call(`${base}/api/system/reboot`, { headers: bearer(token) })).status, 200, `reboot with ${scope}`)
    await backUp(base, device.dataDir, files)
    t.equal(
      (await call(`${base}/api/system/status`, { headers: bearer(token) })).status,
      401,
      'its token died with the boot',
    )
  }
  const { files } = await readJournal(device.dataDir)
  t.equal(new Set(files.map((f) => f.id)).size, 3, 'three files, three ids')
  const verified = await verifyDataDir(device.dataDir, device.logPublicKey, true)
  t.ok(verified.ok, JSON.stringify(verified.problems))
  t.equal(verified.summary.files, 3)
})

t.test('reboot with every service in its own process (--split)', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', split: true })
  const base = device.httpUrl!
  t.equal((await personalise(base, 'E')).status, 200)
  const token = await login(base, 'system:config')
  t.equal((await call(`${base}/api/system/reboot`, { headers: bearer(token) })).status, 200)
  // Eight service processes start one after the other, each verifying the build: slow under a loaded machine.
  await backUp(base, device.dataDir, 2, 120_000)
  t.equal((await call(`${base}/api/system/version`, { headers: bearer(token) })).status, 401, 'the old token is dead')
  const fresh = await login(base, 'system:config')
  t.equal((await call(`${base}/api/system/config`, { headers: bearer(fresh) })).json.user, 'Ada')
  const verified = await verifyDataDir(device.dataDir, device.logPublicKey, true)
  t.ok(verified.ok, JSON.stringify(verified.problems))
})

t.test('shutdown over the API: 200, then the device stops and its port refuses', async (t) => {
  const { device, base } = await owned(t)
  t.equal((await call(`${base}/api/system/shutdown`)).status, 401, 'shutdown needs a token')
  t.equal(
    (await call(`${base}/api/system/shutdown`, { headers: bearer(await login(base, 'system:upgrade')) })).status,
    403,
    'upgrade cannot shut down',
  )
  const token = await login(base, 'system:shutdown')
  const answer = await call(`${base}/api/system/shutdown`, { headers: bearer(token) })
  t.equal(answer.status, 200)
  let timer: NodeJS.Timeout | undefined
  const outcome = await Promise.race([
    device.stopped.then(() => 'stopped'),
    new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still running'), 20_000))),
  ])
  clearTimeout(timer)
  t.equal(outcome, 'stopped', 'device.stopped resolves')
  t.equal(await tryCall(`${base}/api/system/status`), 'ECONNREFUSED', 'nothing listens any more')

  const { records } = await readJournal(device.dataDir)
  const last = records.filter((r) => r.type !== LogType.SEAL).at(-1)
  t.equal(last?.type, LogType.SHUTDOWN, 'SHUTDOWN is the last event')
  t.match(last, { result: LogResult.OK, subject: 'U', decoded: { source: 200 } }, '...and names who asked for it')
  t.equal(records.filter((r) => r.type === LogType.SHUTDOWN).length, 1, 'once')
  const verified = await verifyDataDir(device.dataDir, device.logPublicKey)
  t.ok(verified.ok, `sealed and whole: ${JSON.stringify(verified.problems)}`)
  await device.stop()
  t.same((await readJournal(device.dataDir)).records, records, 'a second stop is harmless: it writes nothing')
})

t.test('shutdown with a system:config token', async (t) => {
  const { device, base } = await owned(t)
  t.equal(
    (await call(`${base}/api/system/shutdown`, { headers: bearer(await login(base, 'system:config')) })).status,
    200,
  )
  await device.stopped
  t.equal(await tryCall(`${base}/api/system/status`), 'ECONNREFUSED', 'stopped: nothing listens any more')
  const shutdown = (await readJournal(device.dataDir)).records.filter((r) => r.type === LogType.SHUTDOWN)
  t.match(shutdown, [{ result: LogResult.OK, subject: 'U', decoded: { source: 200 } }], 'its SHUTDOWN journaled once')
})

t.test('a request whose body never comes does not hold up a reboot: it is answered 503 and closed', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E' })
  const port = Number(new URL(device.httpUrl!).port)
  const head = (path: string, length: number) =>
    requestHead('POST', path, [
      ['Host', '127.0.0.1'],
      ['Content-Type', 'application/json'],
      ['Content-Length', String(length)],
    ])
  const dangling = rawExchange(
    { port, tls: false },
    { steps: [head('/api/system/checkin', 40), Buffer.from('{"che')], timeoutMs: 15_000 },
  )
  const upload = rawExchange(
    { port, tls: false },
    {
      steps: [
        requestHead('POST', '/api/system/upgrade/upload_fw', [
          ['Host', '127.0.0.1'],
          ['Content-Type', 'application/octet-stream'],
          ['Content-Disposition', 'attachment; filename="firmware.bin"'],
          ['Content-Length', '100000'],
        ]),
        Buffer.alloc(300),
      ],
      timeoutMs: 15_000,
    },
  )
  await sleep(300)
  // Answered by the stop itself (503 stopping), not left to uWS's idle timeout.
  await device.restart()
  for (const [what, outcome] of [
    ['JSON body', await dangling],
    ['upload', await upload],
  ] as const) {
    t.match(outcome.responses[0], { status: 503 }, `${what}: 503`)
    t.match(JSON.parse(outcome.responses[0]?.body.toString() ?? '{}'), { error: 'stopping' })
    t.ok(outcome.closed, `${what}: closed`)
  }
  t.equal((await call(`${device.httpUrl}/api/system/status`)).status, 200)
  t.equal((await call(`${device.httpUrl}/api/system/upgrade/check_fw`)).status, 404, 'nothing half-uploaded was staged')
})
