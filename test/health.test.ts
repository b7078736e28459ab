// The fail state on a real device. Faults injected through the simulator's control
// subject (what `hemd sim` sends); gating, journaling, and which bits clear how.
import t, { type Test } from 'tap'
import { sendSimCommand } from '../cli/hemd/sim-cli.js'
import type { SimCommand } from '../actors/system/sim-control.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'
import { api, b64, createKey, Tokens } from './helpers/keys.js'
import { bearer, login, owned, type Owned } from './helpers/owner.js'
import { until } from './helpers/until.js'
import { bootDevice } from './helpers/device.js'
import { nativeEngine, nobleEngine, type CryptoEngine } from '../hal/crypto/index.js'

async function sim(o: Owned, command: SimCommand): Promise<Record<string, unknown>> {
  const reply = await sendSimCommand(o.device.dataDir, command)
  if (reply.status !== 200) throw new Error(`sim ${command.action}: ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body as Record<string, unknown>
}

/** Status, or {} while the device reboots. */
async function status(o: Owned): Promise<Record<string, unknown>> {
  return (await call(`${o.base}/api/system/status`).catch(() => undefined))?.json ?? {}
}

async function failState(o: Owned, fls: number, what: string): Promise<void> {
  await until(`fls_state ${fls} (${what})`, async () => (await status(o)).fls_state === fls, { rethrow: true })
}

async function encrypt(o: Owned, tokens: Tokens, kid: string): Promise<Answer> {
  return api(`${o.https}/api/crypto/cipher/encrypt`, await tokens.get(`keymgmt:use:${kid}`), {
    alg: 'AES256-GCM',
    kid,
    msg: b64(Buffer.from('hello')),
  })
}

async function healthRecords(o: Owned) {
  return (await readJournal(o.device.dataDir)).records.filter(
    (r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'health',
  )
}

async function reboot(o: Owned): Promise<void> {
  await o.device.restart()
  await until(
    'answering after the reboot',
    async () => (await call(`${o.base}/api/system/status`).catch(() => undefined))?.status === 200,
  )
}

t.test(
  'temperature out of range: 0x04 gates keys, crypto and disks; reads keep working; back in range it clears',
  async (t) => {
    const o = await owned(t, { variant: 'P' })
    const tokens = new Tokens(o.base)
    const kid = await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'hot', type: 'AES256' })
    t.equal((await encrypt(o, tokens, kid)).status, 200)
    const disk0 = await tokens.get('storage:disk0')
    t.equal((await api(`${o.base}/api/storage/unlock`, disk0)).status, 200)
    t.match((await status(o)).storage, [/:ro$/, /:-$/])

    t.same(
      await sim(o, { action: 'temperature', celsius: 95 }),
      { fls_state: 0x04 },
      'the answer shows the fault it caused',
    )
    await failState(o, 0x04, 'hot')
    t.equal((await status(o)).temp, 95)
    t.match(await encrypt(o, tokens, kid), { status: 409, json: { error: 'device_fault' } }, 'crypto refused')
    t.equal(
      (await api(`${o.https}/api/keymgmt/list`, await tokens.get('keymgmt:list'))).status,
      409,
      'key management refused',
    )
    t.equal(
      (await api(`${o.https}/api/keymgmt/create`, await tokens.get('keymgmt:gen'), { label: 'x', type: 'AES128' }))
        .status,
      409,
    )
    t.equal((await api(`${o.base}/api/storage/unlock`, disk0)).status, 409, 'no disk unlocks')
    await until('the open disk locked by the fail state', async () =>
      ((await status(o)).storage as string[])[0]!.endsWith(':-'),
    )
    t.equal(
      (await call(`${o.base}/api/system/config/attestation`, { headers: bearer(o.token) })).status,
      409,
      'attestation refused',
    )
    for (const [path, scope] of [
      ['/api/system/version', undefined],
      ['/api/system/config', 'system:config'],
      ['/api/logger/list', 'logger:get'],
      ['/api/logger/key', 'logger:get'],
      ['/api/system/selftest', 'system:config'],
    ] as const) {
      t.equal((await api(`${o.base}${path}`, scope && (await tokens.get(scope)))).status, 200, `${path} still answers`)
    }

    t.equal(
      (await sim(o, { action: 'temperature', celsius: 84 })).fls_state,
      0x04,
      '84 °C: in range, but not 2 °C inside it',
    )
    t.equal((await sim(o, { action: 'temperature', celsius: null })).fls_state, 0, 'the normal reading clears it')
    await failState(o, 0, 'cooled down')
    t.equal((await encrypt(o, tokens, kid)).status, 200, 'crypto works again')
    t.equal((await api(`${o.base}/api/storage/unlock`, disk0)).status, 200, 'a disk unlocks again')

    t.match(await healthRecords(o), [
      { decoded: { from: 'secure', to: 'failed', event: 'TEMPERATURE_OUT_OF_RANGE' } },
      { decoded: { from: 'failed', to: 'secure', event: 'TEMPERATURE_IN_RANGE' } },
    ])
    const { records } = await readJournal(o.device.dataDir)
    t.match(
      records.filter((r) => r.type === LogType.NON_SECURE_STATE),
      [
        { result: LogResult.ERROR, decoded: { fls: 4, raised: 4, source: 'sensor', temp: 95, min: -40, max: 85 } },
        { result: LogResult.OK, decoded: { fls: 0, cleared: 4, temp: 36 } },
      ],
    )
    t.match(
      records.filter(
        (r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'disk' && r.decoded.event === 'LOCK',
      ),
      [{ decoded: { instance: '0', from: 'ro', to: 'locked' } }],
      'the disk lock is journaled',
    )
  },
)

t.test('a configured temperature range', async (t) => {
  const o = await owned(t, { boot: { temperatureRange: { min: 10, max: 40 } } })
  t.equal((await sim(o, { action: 'temperature', celsius: 41 })).fls_state, 0x04)
  t.equal((await sim(o, { action: 'temperature', celsius: 9 })).fls_state, 0x04)
  t.equal((await sim(o, { action: 'temperature', celsius: 25 })).fls_state, 0)
})

t.test(
  'a stuck entropy source: 0x02 and TRNG_FAILED; repaired, the bit holds until a reboot, whose start-up test clears it',
  async (t) => {
    const o = await owned(t)
    const tokens = new Tokens(o.base)
    const kid = await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'iv', type: 'AES256' })
    await tokens.get(`keymgmt:use:${kid}`)
    t.equal((await sim(o, { action: 'entropy', fault: 'stuck' })).fls_state, 0x02)
    await failState(o, 0x02, 'stuck')
    t.equal((await encrypt(o, tokens, kid)).status, 409, 'no IV is drawn from a failed source')
    const trng = (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.TRNG_FAILED)
    t.match(
      trng,
      [{ result: LogResult.ERROR, decoded: { fls: 2, raised: 2, detail: { test: 'repetition_count' } } }],
      'TRNG_FAILED, once',
    )
    t.match(
      await call(`${o.base}/api/auth/token`),
      { status: 409, json: { error: 'device_fault' } },
      'no login challenge without randomness',
    )
    t.equal(
      (await sim(o, { action: 'entropy', fault: 'none' })).fls_state,
      0x02,
      'the repaired source is not trusted yet',
    )

    await reboot(o)
    await failState(o, 0, 'rebooted')
    const fresh = new Tokens(o.base)
    t.equal((await encrypt(o, fresh, kid)).status, 200)

    await sim(o, { action: 'entropy', fault: 'stuck' })
    await t.rejects(
      o.device.restart(),
      { name: 'EntropyHealthError', message: /start-up repetition count health test/ },
      'a reboot over a stuck source fails its start-up test',
    )
    await o.device.stopped
    t.ok(
      (await verifyDataDir(o.device.dataDir, o.device.logPublicKey)).ok,
      'and the device stopped with its journal sealed',
    )
    await t.rejects(
      bootDevice(t, { dataDir: o.device.dataDir, variant: 'E' }),
      { name: 'EntropyHealthError' },
      'nor does it boot again while the source is stuck',
    )
  },
)

t.test('a biased entropy source fails the adaptive proportion test', async (t) => {
  const o = await owned(t)
  const config = await login(o.base, 'system:config')
  t.equal((await sim(o, { action: 'entropy', fault: 'biased' })).fls_state, 0x02)
  t.match(
    (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.TRNG_FAILED),
    [{ decoded: { detail: { test: 'adaptive_proportion' } } }],
  )
  const selftest = await api(`${o.base}/api/system/selftest`, config)
  t.match(selftest, { status: 200, json: { fls_state: 0x02, last_fls_state: 0, repo_stats: { invalid: 0 } } })
  t.match((await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.SELFTEST_PASSED).at(-1), {
    result: LogResult.FAILED,
    decoded: { entropy: 'adaptive_proportion', failed: [] },
  })
  await sim(o, { action: 'entropy', fault: 'none' })
})

t.test(
  'a corrupted key record: found at boot (0x08, KEY_INTEGRITY_ERROR) and at every boot until a wipeout',
  async (t) => {
    const o = await owned(t)
    const tokens = new Tokens(o.base)
    await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'victim', type: 'AES256' })
    const corrupted = await sim(o, { action: 'corrupt-key' })
    t.match(corrupted, { slot: Number, fls_state: 0 }, 'nothing notices while the repository is in memory')
    await reboot(o)
    await failState(o, 0x08, 'corrupt key record')
    t.equal((await api(`${o.https}/api/keymgmt/list`, await login(o.base, 'keymgmt:list'))).status, 409)
    const records = (await readJournal(o.device.dataDir)).records
    t.ok(
      records.some((r) => r.type === LogType.KEY_INTEGRITY_ERROR),
      'KEY_INTEGRITY_ERROR',
    )
    t.match(records.filter((r) => r.type === LogType.NON_SECURE_STATE).at(-1), {
      decoded: { raised: 8, source: 'keystore' },
    })
    await reboot(o)
    await failState(o, 0x08, 'still, after another reboot')

    const config = await login(o.base, 'system:config')
    t.equal(
      (await api(`${o.base}/api/system/config`, config, { wipeout: true })).status,
      200,
      'a wipeout is allowed in a fail state',
    )
    await until(
      'fresh after the wipeout',
      async () => (await call(`${o.base}/api/system/status`).catch(() => undefined))?.json?.inited === false,
    )
    await failState(o, 0, 'wiped')
  },
)

t.test('a corrupted journal line: the next boot finds it (0x08), and the verifier names the file', async (t) => {
  const o = await owned(t)
  const { file } = (await sim(o, { action: 'corrupt-journal' })) as { file: string }
  t.match(file, /^[0-9a-f]{8}$/)
  await reboot(o)
  await failState(o, 0x08, 'corrupt journal')
  const result = await verifyDataDir(o.device.dataDir, o.device.logPublicKey, true)
  t.notOk(result.ok)
  t.match(JSON.stringify(result.problems), file)
})

t.test('sim commands are checked', async (t) => {
  const o = await owned(t)
  for (const body of [
    { action: 'nope' },
    { action: 'temperature', celsius: 'hot' },
    { action: 'entropy', fault: 'warm' },
    { action: 'disk', full: 1 },
    null,
  ]) {
    const reply = await sendSimCommand(o.device.dataDir, body as SimCommand)
    t.equal(reply.status, 400, JSON.stringify(body))
  }
  t.same((await sendSimCommand(o.device.dataDir, { action: 'corrupt-key' })).status, 404, 'no key to corrupt')
  t.same(await sim(o, { action: 'status' }), { fls_state: 0 })

  const gen = await login(o.base, 'keymgmt:gen')
  t.same(await sim(o, { action: 'disk', full: true }), { fls_state: 0 }, 'a full disk is no fail state...')
  t.match(
    await api(`${o.https}/api/keymgmt/create`, gen, { label: 'full', type: 'AES256' }),
    { status: 507, json: { error: 'no_space' } },
    '...but nothing is stored',
  )
  await sim(o, { action: 'disk', full: false })
  t.equal(
    (await api(`${o.https}/api/keymgmt/create`, gen, { label: 'room', type: 'AES256' })).status,
    200,
    'space returned',
  )
})

t.test(
  "a stack overflow in a service's command: " +
    '500 for that request, 0x20 raised, held while the temperature comes and goes',
  async (t) => {
    let fault: 'stack' | undefined
    const overflow = (depth: number): number => overflow(depth + 1) + 1
    const faulty: CryptoEngine = {
      ...nativeEngine,
      aesGcmEncrypt: (...args) => {
        if (fault === 'stack') overflow(0)
        return nativeEngine.aesGcmEncrypt(...args)
      },
    }
    const o = await owned(t, { boot: { cryptoEngines: { native: faulty, noble: nobleEngine } } })
    const tokens = new Tokens(o.base)
    const kid = await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'deep', type: 'AES256' })
    await tokens.get(`keymgmt:use:${kid}`)
    fault = 'stack'
    t.match(await encrypt(o, tokens, kid), { status: 500, json: { error: 'internal_error' } })
    await failState(o, 0x20, 'stack overflow')
    fault = undefined
    await sim(o, { action: 'temperature', celsius: 95 })
    await sim(o, { action: 'temperature', celsius: null })
    t.equal((await encrypt(o, tokens, kid)).status, 409, 'the fail state holds: nothing more reaches the engine')
    t.match(
      (await healthRecords(o)).map((r) => r.decoded?.event),
      ['STACK_OVERFLOW', 'TEMPERATURE_OUT_OF_RANGE', 'TEMPERATURE_IN_RANGE'],
    )
    t.match((await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.NON_SECURE_STATE)[0], {
      decoded: { raised: 0x20, source: 'keystore' },
    })
  },
)
