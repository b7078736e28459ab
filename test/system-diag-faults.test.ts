// The system service's DIAG operations over the bus, as the gateway sends them (crypto-contract §6): only a device
// started with --diag answers them; their faults live in memory and a reboot clears them.
import t from 'tap'
import { DIAG_SUFFIX, SYSTEM_DIAG_OPS } from '../protocol/index.js'
import { LogType } from '../protocol/journal.js'
import type { Device } from '../runtime/types.js'
import { bootDevice } from './helpers/device.js'
import { gatewayBus, systemOp } from './helpers/gateway-bus.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { until } from './helpers/until.js'

async function status(device: Device): Promise<Record<string, unknown>> {
  return (await call(`${device.httpUrl}/api/system/status`)).json
}

t.test('without --diag: no diag operation exists, fwv has no suffix, STARTUP says nothing of it', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E' })
  const nc = await gatewayBus(t, device)
  for (const op of SYSTEM_DIAG_OPS)
    t.match(await systemOp(nc, device, op), { status: 404, body: { error: 'unknown_operation' } }, `${op}: no handler`)
  t.notMatch((await call(`${device.httpUrl}/api/system/version`)).json.fwv, /-DIAG$/)
  const startup = (await readJournal(device.dataDir)).records.find((r) => r.type === LogType.STARTUP)
  t.notOk(startup?.decoded && 'diag' in startup.decoded, 'no diag in STARTUP')
})

t.test('with --diag: fwv ends in -DIAG, STARTUP records diag: true', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  const fwv = (await call(`${device.httpUrl}/api/system/version`)).json.fwv as string
  t.ok(fwv.endsWith(DIAG_SUFFIX), fwv)
  t.notOk(fwv.slice(0, -DIAG_SUFFIX.length).endsWith(DIAG_SUFFIX), 'the suffix once')
  const startup = (await readJournal(device.dataDir)).records.find((r) => r.type === LogType.STARTUP)
  t.match(startup?.decoded, { diag: true })
})

t.test('diag_break_temp: 125 °C and fls 0x04 before the answer; a reboot clears it', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'P', diag: true })
  const nc = await gatewayBus(t, device)
  t.strictSame(await systemOp(nc, device, 'diag_break_temp'), { status: 200 }, 'an empty 200')
  t.match(await status(device), { fls_state: 0x04, temp: 125 }, 'the fault shows at once')
  t.match((await readJournal(device.dataDir)).records.filter((r) => r.type === LogType.NON_SECURE_STATE).at(-1), {
    decoded: { raised: 0x04, temp: 125 },
  })
  t.strictSame(await systemOp(nc, device, 'diag_break_temp'), { status: 200 }, 'again: 200')

  await device.restart()
  await until('the reboot answers', async () => (await call(`${device.httpUrl}/api/system/status`)).status === 200)
  t.match(await status(device), { fls_state: 0, temp: 36 }, 'the sensor reads normally after a reboot')
})

t.test(
  'diag_break_trng: stuck bytes below the health tests, fls 0x02 before the answer; a reboot clears it',
  async (t) => {
    const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
    const nc = await gatewayBus(t, device)
    const before = Math.floor(Date.now() / 1000)
    const broken = await systemOp(nc, device, 'diag_break_trng')
    t.equal(broken.status, 200)
    const body = broken.body as { mode: number; last_ts: number; last_val: number }
    t.strictSame(Object.keys(body).sort(), ['last_ts', 'last_val', 'mode'])
    t.equal(body.mode, 1, 'mode 1: a forced failure')
    t.ok(
      Number.isInteger(body.last_ts) && body.last_ts >= before,
      `last_ts is the health test just run (${body.last_ts})`,
    )
    t.ok(Number.isInteger(body.last_val) && body.last_val >= 0 && body.last_val <= 255, 'last_val is a byte')
    t.equal((await status(device)).fls_state, 0x02, 'fls 0x02 before the answer')
    t.match(
      (await readJournal(device.dataDir)).records.filter((r) => r.type === LogType.TRNG_FAILED),
      [{ decoded: { raised: 0x02, source: 'continuous', detail: { test: 'repetition_count' } } }],
    )
    const again = await systemOp(nc, device, 'diag_break_trng')
    t.match(again, { status: 200, body: { mode: 1, last_val: body.last_val } }, 'again: 200, the same stuck byte')

    const raw = await systemOp(nc, device, 'diag_test_trng')
    const stuck = Buffer.from((raw.body as { rnd: string }).rnd, 'base64')
    t.equal(stuck.length, 8192)
    t.equal(new Set(stuck).size, 1, 'the raw source repeats one byte')
    t.equal(stuck[0], body.last_val, 'the byte last_val showed')

    // A power-up clears the forced failure: the boot's start-up test passes.
    await device.restart()
    await until('the reboot answers', async () => (await call(`${device.httpUrl}/api/system/status`)).status === 200)
    t.equal((await status(device)).fls_state, 0, 'secure again after a reboot')
    const fresh = Buffer.from(((await systemOp(nc, device, 'diag_test_trng')).body as { rnd: string }).rnd, 'base64')
    t.ok(new Set(fresh).size > 200, 'the raw source delivers varied bytes again')
  },
)

t.test('diag_test_trng: 8192 raw bytes in standard padded base64; diag_disable_selftest: empty 200', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  const nc = await gatewayBus(t, device)
  const answer = await systemOp(nc, device, 'diag_test_trng')
  t.equal(answer.status, 200)
  const rnd = (answer.body as { rnd: string }).rnd
  t.match(rnd, /^[A-Za-z0-9+/]+={0,2}$/)
  t.equal(rnd.length, 10924, '8192 bytes, padded')
  t.equal(Buffer.from(rnd, 'base64').length, 8192)
  t.equal((await status(device)).fls_state, 0, 'a raw sample changes nothing')
  t.strictSame(await systemOp(nc, device, 'diag_disable_selftest'), { status: 200 })
})
