import { X509Certificate } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { HalError, HalVariantMismatchError } from '../errors.js'
import type { BootSlots, Clock, Hal, OpenHalOptions } from '../types.js'
import { developmentAnchors, developmentTrust, type TrustAnchors } from '../trust-anchors.js'
import { createBootSlots, loadBootSlots, SimFirmwareSlots } from './boot-slots.js'
import { DataDirLock } from './data-dir-lock.js'
import { frontHal } from './front-hal.js'
import {
  type DeviceIdentity,
  SYSTEM_RESERVED_SECTORS,
  newDeviceIdentity,
  readDeviceIdentity,
  writeDeviceIdentity,
} from './device-identity.js'
import { hostClock } from './host-clock.js'
import { FileJournalMedia } from './journal-media.js'
import { FileKeySlotMedia } from './key-slot-media.js'
import { BACKUP_KEY_FILE, FileKeystoreBlob } from './keystore-blob.js'
import { HealthTestedEntropy, startupTest } from '../health-tested-entropy.js'
import { nodeEntropy } from './node-entropy.js'
import { DEVICE_HEALTH_TESTS } from '../sp800-90b.js'
import { SimEntropy } from './sim-entropy.js'
import { SimFaultInjector, simFaultFiles } from './sim-fault-injector.js'
import { SimEnclave } from './sim-enclave.js'
import { SimTemperature } from './sim-temperature.js'
import { SimDisks } from './sim-disks.js'
import { SimUpgradeStaging } from './upgrade-staging.js'
import { SimWebrootStore } from './webroot-store.js'

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
  const faultFiles = simFaultFiles(dataDir)
  const entropy = new HealthTestedEntropy(
    new SimEntropy(faultFiles.entropy, options.entropy ?? nodeEntropy),
    DEVICE_HEALTH_TESTS,
    clock,
  )
  startupTest(entropy)
  const trust = trustOf(options)
  const existing = await readDeviceIdentity(dataDir)
  if (options.front) {
    const developmentKeys = developmentAnchors(trust).length > 0
    const { backendKey, vendorKey } = trust
    return frontHal(dataDir, options.variant, existing, {
      clock,
      entropy,
      temperatureFile: faultFiles.temperature,
      trust: { backendKey, vendorKey, developmentKeys },
    })
  }
  const { identity, enclave, boot } = await openDevice(dataDir, existing, options, trust.factoryRoot, entropy, clock)
  const runDir = join(dataDir, 'run')
  await mkdir(runDir, { recursive: true, mode: 0o700 })
  const keySlots = new FileKeySlotMedia(join(dataDir, 'keys'))
  const journalDir = join(dataDir, 'journal')
  const journal = new FileJournalMedia(journalDir)
  return {
    variant: identity.variant,
    devid: identity.devid,
    clock,
    entropy,
    temperature: new SimTemperature(faultFiles.temperature),
    enclave,
    storage: identity.storage,
    disks:
      identity.variant === 'P'
        ? new SimDisks(
            join(dataDir, 'disks'),
            identity.storage.capacitySectors,
            SYSTEM_RESERVED_SECTORS,
            enclave.sealer('disks'),
            entropy,
          )
        : undefined,
    boot,
    firmwareSlots: new SimFirmwareSlots(join(dataDir, 'boot'), boot.running),
    staging: new SimUpgradeStaging(join(dataDir, 'upgrade')),
    webroot: identity.variant === 'P' ? new SimWebrootStore(join(dataDir, 'webroot')) : undefined,
    journal,
    keySlots,
    backupKey: new FileKeystoreBlob(join(dataDir, 'keys', BACKUP_KEY_FILE)),
    backendKey: trust.backendKey,
    vendorKey: trust.vendorKey,
    developmentKeys: developmentAnchors(trust).length > 0,
    faults: new SimFaultInjector(dataDir, { media: journal, dir: journalDir }, keySlots),
    runDir,
    close: async () => {
      try {
        await keySlots.close()
      } finally {
        await close()
      }
    },
  }
}

/** The installation's trust anchors: those given, the development ones for the rest. */
function trustOf(options: OpenHalOptions): TrustAnchors {
  const dev = developmentTrust()
  return {
    backendKey: options.backendKey ?? dev.backendKey,
    vendorKey: options.vendorKey ?? dev.vendorKey,
    factoryRoot: checkedFactoryRoot(options.factoryRoot ?? dev.factoryRoot),
  }
}

/** The device's identity, enclave and boot slots: loaded, or made on the first open. */
async function openDevice(
  dataDir: string,
  existing: DeviceIdentity | undefined,
  options: OpenHalOptions,
  factoryRoot: Uint8Array,
  entropy: HealthTestedEntropy,
  clock: Clock,
): Promise<{ identity: DeviceIdentity; enclave: SimEnclave; boot: BootSlots }> {
  const enclaveDir = join(dataDir, 'enclave')
  const bootDir = join(dataDir, 'boot')
  if (existing) {
    if (existing.variant !== options.variant) {
      throw new HalVariantMismatchError(dataDir, existing.variant, options.variant)
    }
    return {
      identity: existing,
      // The lock holder is the device booting: TLS material staged before the restart goes live now.
      enclave: await SimEnclave.load(enclaveDir, { ...existing, factoryRoot }, entropy, options.lock !== false),
      boot: await loadBootSlots(bootDir, options.firmware, options.booted),
    }
  }
  const identity = newDeviceIdentity(options.variant, entropy, clock)
  const enclave = await SimEnclave.create(enclaveDir, { ...identity, factoryRoot }, entropy, clock)
  const boot = await createBootSlots(bootDir, options.firmware)
  // device.json is written last: it marks the device as complete, so a first open that died
  // halfway starts over instead of leaving keys that belong to no identity.
  await writeDeviceIdentity(dataDir, identity)
  return { identity, enclave, boot }
}

function checkedFactoryRoot(der: Uint8Array): Uint8Array {
  try {
    new X509Certificate(Buffer.from(der))
  } catch (err) {
    throw new HalError('the factory root is not a DER X.509 certificate', { cause: err })
  }
  return der
}
