// What a device restarted fresh shows (a wipeout, DIAG's wipe_config): not personalised, no fault,
// the factory hostname, and neither a sealed key nor a disk left on its media.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Test } from 'tap'
import { factoryConfig } from '../../machines/config.js'
import { call } from './http.js'

/** The bytes of the key store's media (every slot file of the data dir's `keys`), empty when there is none. */
export async function keyMedia(dataDir: string): Promise<Buffer> {
  const dir = join(dataDir, 'keys')
  const names = await readdir(dir).catch(() => [] as string[])
  return Buffer.concat(await Promise.all(names.filter((n) => n.endsWith('.bin')).map((n) => readFile(join(dir, n)))))
}

/** Names in the data dir's `disks`: the images, their key and layout. */
export async function diskFiles(dataDir: string): Promise<string[]> {
  return readdir(join(dataDir, 'disks')).catch(() => [])
}

/** Checks that the device answers as a fresh one and holds nothing of its former owner. */
export async function expectFresh(t: Test, base: string, dataDir: string, variant: 'P' | 'E'): Promise<void> {
  const status = (await call(`${base}/api/system/status`)).json
  t.equal(status.inited, false, 'not personalised')
  t.equal(status.fls_state, 0, 'fls_state 0')
  t.equal(status.hostname, factoryConfig(variant).hostname, 'the default hostname')
  t.notOk('format' in status, 'no format under way')
  t.equal((await call(`${base}/api/auth/init`)).status, 200, 'ready to be personalised')
  t.equal((await call(`${base}/api/auth/token`)).status, 409, 'no login: nobody owns it')
  t.notOk(
    (await keyMedia(dataDir)).some((b) => b !== 0),
    'no key record left on the key store media',
  )
  t.same(await diskFiles(dataDir), [], 'the disks erased')
}
