// The public face of the HAL: open the device, and the types and errors that describe it.
import { openSimHal } from './sim/open-sim-hal.js'
import type { Hal, OpenHalOptions } from './types.js'

export type * from './types.js'
export {
  AlreadyProvisionedError,
  DiskLockedError,
  DiskNotFormattedError,
  DiskReadOnlyError,
  EntropyError,
  HalCorruptError,
  HalError,
  HalLockedError,
  HalUnsupportedError,
  HalVariantMismatchError,
  isStorageFull,
  StorageFullError,
  TlsMaterialError,
  UnsealError,
} from './errors.js'
export { EntropyHealthError } from './health-tested-entropy.js'

/** Opens the device. The simulator is the only implementation so far. */
export function openHal(options: OpenHalOptions): Promise<Hal> {
  return openSimHal(options)
}
