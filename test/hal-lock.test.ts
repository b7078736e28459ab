import { spawnSync } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { HalLockedError, openHal, type SignedComponent } from '../hal/index.js'

const firmware: SignedComponent = {
  version: '2.0.0',
  publicKey: new Uint8Array(32),
  signature: new Uint8Array(64),
}

t.test('the lock names its holder and keeps others out', async (t) => {
  const dataDir = t.testdir()
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  t.equal((await readFile(join(dataDir, 'hemd.lock'), 'utf8')).trim(), String(process.pid))

  const err = await openHal({ variant: 'P', dataDir, firmware }).catch((e: unknown) => e)
  t.type(err, HalLockedError)
  t.equal((err as HalLockedError).pid, process.pid)
  t.match((err as Error).message, `in use by pid ${process.pid}`)
  t.match((err as Error).message, '--data DIR')

  await hal.close()
  t.notOk(existsSync(join(dataDir, 'hemd.lock')), 'close releases the lock')
  await hal.close()
  const again = await openHal({ variant: 'P', dataDir, firmware })
  await again.close()
})

t.test('a lock held by another live process', async (t) => {
  const dataDir = t.testdir()
  await writeFile(join(dataDir, 'hemd.lock'), `${process.ppid}\n`)
  await t.rejects(openHal({ variant: 'P', dataDir, firmware }), { name: 'HalLockedError', pid: process.ppid })
})

t.test('a stale lock is taken over', async (t) => {
  const dataDir = t.testdir()
  const gone = spawnSync(process.execPath, ['-e', '']).pid
  t.ok(gone)
  await writeFile(join(dataDir, 'hemd.lock'), `${gone}\n`)
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  t.equal((await readFile(join(dataDir, 'hemd.lock'), 'utf8')).trim(), String(process.pid))
  await hal.close()
})

t.test('a takeover abandoned by a dead process does not block the next one', async (t) => {
  const dataDir = t.testdir()
  const gone = spawnSync(process.execPath, ['-e', '']).pid
  await writeFile(join(dataDir, 'hemd.lock'), `${gone}\n`)
  await writeFile(join(dataDir, 'hemd.lock.takeover'), `${gone}\n`)
  await (await openHal({ variant: 'P', dataDir, firmware })).close()
  t.notOk(existsSync(join(dataDir, 'hemd.lock.takeover')))
})

t.test('a lock file without a pid is stale', async (t) => {
  const dataDir = t.testdir()
  await writeFile(join(dataDir, 'hemd.lock'), '')
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  t.equal((await readFile(join(dataDir, 'hemd.lock'), 'utf8')).trim(), String(process.pid), 'taken over')
  await hal.close()
})

t.test('lock: false opens without the lock', async (t) => {
  const dataDir = t.testdir()
  const held = await openHal({ variant: 'E', dataDir, firmware })
  t.teardown(() => held.close())
  const unlocked = await openHal({ variant: 'E', dataDir, firmware, lock: false })
  t.equal(unlocked.devid, held.devid)
  await unlocked.close()
  t.ok(existsSync(join(dataDir, 'hemd.lock')), 'closing an unlocked HAL leaves the holder alone')
})
