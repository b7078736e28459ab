import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { openHal, type SignedComponent } from '../hal/index.js'

const firmware: SignedComponent = {
  version: '2.0.0',
  publicKey: new Uint8Array(32),
  signature: new Uint8Array(64),
}

t.test('the host clock', async (t) => {
  const hal = await openHal({ variant: 'E', dataDir: t.testdir(), firmware })
  t.teardown(() => hal.close())
  const { clock } = hal
  t.ok(clock.isSet())
  const before = Date.now()
  const now = clock.now()
  t.ok(now >= before && now <= Date.now(), 'now: the host wall clock')

  const start = clock.monotonic()
  await new Promise((resolve) => setTimeout(resolve, 20))
  const afterWait = clock.monotonic()
  t.ok(afterWait > start, 'monotonic advances')

  const other = Number(
    execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.hrtime.bigint() / 1_000_000n))']),
  )
  const end = clock.monotonic()
  t.ok(other >= afterWait && other <= end, 'another process reads the same monotonic clock')
})

t.test('the host entropy source', async (t) => {
  const hal = await openHal({ variant: 'E', dataDir: t.testdir(), firmware })
  t.teardown(() => hal.close())
  const { entropy } = hal
  t.equal(entropy.read(1).length, 1)
  t.equal(entropy.read(65_536).length, 65_536)
  t.not(Buffer.from(entropy.read(32)).toString('hex'), Buffer.from(entropy.read(32)).toString('hex'))
  for (const n of [0, -1, 1.5, 65_537, Number.NaN]) t.throws(() => entropy.read(n), RangeError, `rejects ${n}`)
})

t.test('the simulated temperature and its override file', async (t) => {
  const dataDir = t.testdir()
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  t.teardown(() => hal.close())
  t.equal(hal.temperature.readCelsius(), 36)
  await mkdir(join(dataDir, 'sim'), { recursive: true })
  const override = join(dataDir, 'sim', 'temperature')
  await writeFile(override, '71\n')
  t.equal(hal.temperature.readCelsius(), 71)
  await writeFile(override, '-4.6')
  t.equal(hal.temperature.readCelsius(), -5)
  await writeFile(override, 'hot')
  t.throws(() => hal.temperature.readCelsius(), { name: 'HalCorruptError' })
})
