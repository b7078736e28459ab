import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { HalVariantMismatchError } from '../errors.js'
import type { BootSlots, Hal, OpenHalOptions } from '../types.js'
import { createBootSlots, loadBootSlots } from './boot-slots.js'
import { DataDirLock } from './data-dir-lock.js'
import { newDeviceIdentity, readDeviceIdentity, writeDeviceIdentity } from './device-identity.js'
import { hostClock } from './host-clock.js'
import { FileJournalMedia } from './journal-media.js'
import { nodeEntropy } from './node-entropy.js'
import { SimEnclave } from './sim-enclave.js'
import { SimTemperature } from './sim-temperature.js'

/** The simulated device: all of its state lives in files under `options.dataDir`. */
export async function openSimHal(options: OpenHalOptions): Promise<Hal> {
  const dataDir = resolve(options.dataDir)
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const lock = options.lock === false ? undefined : await DataDirLock.acquire(dataDir)
  try {
    return await assemble(dataDir, options, async () => lock?.release())
  } catch (err) {
    await lock?.release()
    throw err
  }
}

async function assemble(dataDir: string, options: OpenHalOptions, close: () => Promise<void>): Promise<Hal> {
  const clock = options.clock ?? hostClock
  const entropy = options.entropy ?? nodeEntropy
  const enclaveDir = join(dataDir, 'enclave')
  const bootDir = join(dataDir, 'boot')
  let identity = await readDeviceIdentity(dataDir)
  let enclave: SimEnclave
  let boot: BootSlots
  if (identity) {
    if (identity.variant !== options.variant) {
      throw new HalVariantMismatchError(dataDir, identity.variant, options.variant)
    }
    enclave = await SimEnclave.load(enclaveDir, identity.genuineId)
    boot = await loadBootSlots(bootDir, options.firmware)
  } else {
    identity = newDeviceIdentity(options.variant, entropy, clock)
    enclave = await SimEnclave.create(enclaveDir, identity.devid, identity.genuineId, entropy, clock)
    boot = await createBootSlots(bootDir, options.firmware)
    // device.json is written last: it marks the device as complete, so a first open that died
    // halfway starts over instead of leaving keys that belong to no identity.
    await writeDeviceIdentity(dataDir, identity)
  }
  const runDir = join(dataDir, 'run')
  await mkdir(runDir, { recursive: true, mode: 0o700 })
  return {
    variant: identity.variant,
    devid: identity.devid,
    clock,
    entropy,
    temperature: new SimTemperature(join(dataDir, 'sim', 'temperature')),
    enclave,
    storage: identity.storage,
    boot,
    journal: new FileJournalMedia(join(dataDir, 'journal')),
    runDir,
    close,
  }
}
