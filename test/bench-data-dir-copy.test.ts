// The bench boots copies of its cached data dir: a copy is never locked by the process that built the cache entry.
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { copyDataDir } from '../bench/boot-journal.js'
import { DataDirLock } from '../hal/sim/data-dir-lock.js'

t.test("a copy of a cached data dir that kept its builder's hemd.lock boots", async (t) => {
  const root = t.testdir({ cached: { 'device.json': '{}\n', journal: { '00000001.log': 'record\n' } } })
  const cached = join(root, 'cached')
  // A live process's pid (this one's): what a lock left behind names once its pid is reused.
  writeFileSync(join(cached, 'hemd.lock'), `${process.pid}\n`, { mode: 0o600 })
  const copy = join(root, 'copy')
  await copyDataDir(cached, copy)
  t.notOk(existsSync(join(copy, 'hemd.lock')), 'the copy holds no lock')
  t.ok(existsSync(join(copy, 'journal', '00000001.log')), 'and everything else')
  const lock = await DataDirLock.acquire(copy)
  t.teardown(() => lock.release())
  t.ok(existsSync(join(copy, 'hemd.lock')), 'a device takes the copy')
  t.ok(existsSync(join(cached, 'hemd.lock')), 'the cache entry is left as it was')
})
