import { join } from 'node:path'
import { HalError, HalUnsupportedError, HalVariantMismatchError } from '../errors.js'
import type { Clock, Hal, TestedEntropySource, Variant } from '../types.js'
import type { DeviceIdentity } from './device-identity.js'
import { SimTemperature } from './sim-temperature.js'
import { SimWebrootStore } from './webroot-store.js'

/**
 * The device as the network-facing process sees it (`OpenHalOptions.front`): its identity, clock,
 * entropy and the management app. Nothing that holds a secret or the device's state is opened,
 * so a process run as a user that cannot read those files still starts; a use of them throws.
 */
export function frontHal(
  dataDir: string,
  variant: Variant,
  identity: DeviceIdentity | undefined,
  parts: {
    clock: Clock
    entropy: TestedEntropySource
    temperatureFile: string
    trust: Pick<Hal, 'backendKey' | 'vendorKey' | 'developmentKeys'>
  },
): Hal {
  if (!identity) throw new HalError(`${dataDir} holds no device yet: the front opens only a created one`)
  if (identity.variant !== variant) throw new HalVariantMismatchError(dataDir, identity.variant, variant)
  return {
    variant: identity.variant,
    devid: identity.devid,
    clock: parts.clock,
    entropy: parts.entropy,
    temperature: new SimTemperature(parts.temperatureFile),
    storage: identity.storage,
    webroot: identity.variant === 'P' ? new SimWebrootStore(join(dataDir, 'webroot')) : undefined,
    ...parts.trust,
    enclave: notOpened('enclave'),
    disks: identity.variant === 'P' ? notOpened<NonNullable<Hal['disks']>>('disks') : undefined,
    boot: notOpened('boot'),
    firmwareSlots: notOpened('firmwareSlots'),
    staging: notOpened('staging'),
    journal: notOpened('journal'),
    keySlots: notOpened('keySlots'),
    backupKey: notOpened('backupKey'),
    runDir: join(dataDir, 'run'),
    close: async () => undefined,
  }
}

/** A part of the HAL this process did not open: any use of it is refused. */
function notOpened<T extends object>(part: string): T {
  return new Proxy({} as T, {
    get: (_, property) => {
      // `then` is asked by `await`: the part is not a promise.
      if (property === 'then') return undefined
      throw new HalUnsupportedError(`the ${part} is not open in the front process`)
    },
  })
}
