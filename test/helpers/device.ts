import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadFirmware } from '../../image/firmware-manifest.js'
import { concretePort } from '../../runtime/concrete-port.js'
import { startDevice } from '../../runtime/start-device.js'
import type { Device, DeviceOptions } from '../../runtime/types.js'
import { developmentTrust } from '../../hal/trust-anchors.js'
import type { SignedComponent } from '../../hal/types.js'
import { skippingClock } from './clock.js'
import { silentLogger } from './logger.js'
import { seedSharedIdentity } from './shared-identity.js'

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
export const distDir = `${repoRoot}dist`

let firmware: Promise<SignedComponent> | undefined

/** The signed build that `npm test` made first (deploy/setup.sh). */
export function builtFirmware(): Promise<SignedComponent> {
  return (firmware ??= loadFirmware(distDir))
}

/** Devices of this process running with the run's shared identity of a variant: two at once must differ. */
const sharingIdentity = new Set<string>()

export interface BootOptions extends Partial<DeviceOptions> {
  dataDir: string
  /**
   * A new data dir starts with the run's shared identity of its variant (test/helpers/shared-identity.ts)
   * unless this says `fresh`, or the test gives its own `entropy` or `trust`, or another device of this
   * process has it now.
   */
  identity?: 'shared' | 'fresh'
}

/**
 * A whole device on free loopback ports with its own data dir; stopped when the test ends. It
 * trusts the development keys (deploy/keys/), as `hemd --dev-keys` does, unless `trust` says otherwise.
 * Its clock lets the login brake pass at once (`skippingClock`) unless `clock` says otherwise.
 */
export async function bootDevice(t: { teardown(fn: () => unknown): void }, bootOptions: BootOptions): Promise<Device> {
  const { identity = 'shared', ...options } = bootOptions
  const variant = options.variant ?? 'P'
  const shared =
    identity === 'shared' &&
    options.entropy === undefined &&
    options.trust === undefined &&
    !sharingIdentity.has(variant) &&
    !existsSync(join(options.dataDir, 'device.json'))
  if (shared) {
    sharingIdentity.add(variant)
    t.teardown(() => void sharingIdentity.delete(variant))
    await seedSharedIdentity(options.dataDir, variant, options.firmware ?? (await builtFirmware()))
  }
  const device = await startDevice({
    variant,
    http: { host: '127.0.0.1', port: 0 },
    https: { host: '127.0.0.1', port: 0 },
    firmware: await builtFirmware(),
    trust: developmentTrust(),
    logger: silentLogger,
    clock: skippingClock(),
    ...options,
  })
  stopFirstAtEnd(t, device)
  return device
}

/**
 * Stops the device as a tap test ends, before the rest of its end: tap removes a `t.testdir()` made
 * before the test's first teardown ahead of every teardown, and a device still running there (a reboot
 * it ordered itself, as a wipeout does 5 s later) would boot again in the folder removed under it.
 * Anything else that stands in for a test (the screenshots script) stops it in its teardowns.
 */
function stopFirstAtEnd(t: { teardown(fn: () => unknown): void }, device: Device): void {
  const ending = t as { teardown(fn: () => unknown): void; onEOF?: () => unknown }
  const rest = ending.onEOF?.bind(ending)
  if (!rest) return t.teardown(() => device.stop())
  ending.onEOF = async () => {
    await device.stop()
    return rest()
  }
}

/** A loopback port free now, for a device that must keep its address across processes. */
export async function freePort(): Promise<number> {
  return (await concretePort({ host: '127.0.0.1', port: 0 })).port
}
