// A new device's identity (device.json, enclave/, boot/) made once per variant in a run and copied
// into each fresh data dir that `bootDevice` starts, so every such device has the same eid and the
// two PBKDF2-600k runs of its owner's passphrases are made once per run (`RUN_SEEDS`), not once per
// device. tap's `before` (test/tools/run-before.ts) empties the folder; a test that needs an identity
// of its own asks `bootDevice` for `identity: 'fresh'`.
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openHal } from '../../hal/index.js'
import type { SignedComponent, Variant } from '../../hal/types.js'

export const SHARED_IDENTITY_DIR = fileURLToPath(new URL('../../.tap/device-identity', import.meta.url))
/** The seeds file of the tests' PassphraseKeyCache (test/helpers/owner.ts). */
export const RUN_SEEDS = join(SHARED_IDENTITY_DIR, 'seeds.json')
const IDENTITY_PARTS = ['device.json', 'enclave', 'boot'] as const

const made = new Map<string, Promise<string>>()

/** Copies the run's identity of `variant` into the empty data dir `dataDir`. */
export async function seedSharedIdentity(dataDir: string, variant: Variant, firmware: SignedComponent): Promise<void> {
  const template = await sharedIdentity(variant, firmware)
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  for (const part of IDENTITY_PARTS) await cp(join(template, part), join(dataDir, part), { recursive: true })
}

function sharedIdentity(variant: Variant, firmware: SignedComponent): Promise<string> {
  const build = createHash('sha256').update(firmware.version).update(firmware.signature).digest('hex').slice(0, 16)
  const name = `${variant}-${build}`
  let template = made.get(name)
  if (!template) {
    template = ensureTemplate(join(SHARED_IDENTITY_DIR, name), variant, firmware)
    made.set(name, template)
  }
  return template
}

/** Another test process may be making the same one: whoever renames first wins, the other uses it. */
async function ensureTemplate(path: string, variant: Variant, firmware: SignedComponent): Promise<string> {
  if (complete(path)) return path
  await mkdir(SHARED_IDENTITY_DIR, { recursive: true })
  const scratch = await mkdtemp(`${path}.tmp-`)
  const hal = await openHal({ variant, dataDir: scratch, firmware })
  await hal.close()
  await rename(scratch, path).catch(async (err: unknown) => {
    await rm(scratch, { recursive: true, force: true })
    if (!complete(path)) throw err
  })
  return path
}

/** device.json is what a HAL open writes last (open-sim-hal.ts): with it, the identity is whole. */
function complete(path: string): boolean {
  return existsSync(join(path, 'device.json'))
}
