// DIAG break_tls (crypto-contract §6): after the next 5 HTTPS requests, every further HTTPS request
// has its connection closed without an HTTP answer, until a reboot; plain HTTP keeps answering.
import t from 'tap'
import type { Logger } from 'pino'
import { TLS_BREAK_GRACE, TlsBreaker } from '../gateway/tls-breaker.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { tryCall } from './helpers/try-call.js'

/** Whether an HTTPS request on a new connection got any HTTP answer. */
async function answered(https: string): Promise<boolean> {
  return typeof (await tryCall(`${https}/api/system/version`)) !== 'string'
}

t.test('5 more HTTPS requests are answered, then none; HTTP keeps working; a reboot clears it', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  const { httpUrl, httpsUrl } = device as { httpUrl: string; httpsUrl: string }
  t.ok(await answered(httpsUrl), 'HTTPS answers before')

  const armed = await call(`${httpsUrl}/api/diag/break_tls`)
  t.equal(armed.status, 200, 'armed over HTTPS: its own answer still goes out')
  t.equal(armed.text, '', 'no body')
  for (let i = 1; i <= TLS_BREAK_GRACE; i++) t.ok(await answered(httpsUrl), `HTTPS request ${i} answered`)
  t.equal((await call(`${httpUrl}/api/diag/break_tls`)).status, 200, 'arming again over HTTP changes nothing...')
  const broken = await Promise.all(Array.from({ length: 20 }, () => tryCall(`${httpsUrl}/api/system/version`)))
  t.same(
    broken.filter((a) => typeof a !== 'string'),
    [],
    'none of 20 new HTTPS connections gets an HTTP answer',
  )
  t.ok(
    broken.every((a) => a === 'ECONNRESET'),
    `each is closed (${[...new Set(broken)].join(', ')})`,
  )
  t.equal((await call(`${httpUrl}/api/system/status`)).status, 200, 'plain HTTP keeps answering')
  t.equal((await call(`${httpUrl}/api/diag/test`)).status, 200)

  await device.restart()
  for (let i = 0; i < TLS_BREAK_GRACE + 3; i++) t.ok(await answered(httpsUrl), `after the reboot: HTTPS ${i + 1}`)
})

t.test('armed over HTTP, the count is of HTTPS requests only', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  const { httpUrl, httpsUrl } = device as { httpUrl: string; httpsUrl: string }
  t.equal((await call(`${httpUrl}/api/diag/break_tls`)).status, 200)
  for (let i = 0; i < 10; i++) t.equal((await call(`${httpUrl}/api/system/version`)).status, 200)
  for (let i = 1; i <= TLS_BREAK_GRACE; i++) t.ok(await answered(httpsUrl), `HTTPS request ${i} answered`)
  t.notOk(await answered(httpsUrl), 'the sixth is not')
})

t.test('the breaker warns once when armed and once when it starts dropping', async (t) => {
  const warnings: unknown[][] = []
  const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger
  const breaker = new TlsBreaker(logger)
  t.notOk(breaker.drops(), 'not armed: nothing dropped')
  t.equal(warnings.length, 0)
  breaker.arm()
  breaker.arm()
  t.equal(warnings.length, 1, 'armed: one warning')
  const drops = Array.from({ length: TLS_BREAK_GRACE + 4 }, () => breaker.drops())
  t.same(drops, [...Array(TLS_BREAK_GRACE).fill(false), true, true, true, true])
  t.equal(warnings.length, 2, 'dropping: one more warning, not one per request')
  breaker.arm()
  t.ok(breaker.drops(), 'arming again does not heal it')
})
