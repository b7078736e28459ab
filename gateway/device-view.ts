import type { IdentityState, KeystoreState, StorageState, SystemState, UpgradeState } from '../protocol/index.js'
import type { GatewayBus } from '../bus/index.js'

/** The services whose read models the gateway projects: it answers only while it knows all of them. */
export const gatewayProjections = ['system', 'auth', 'keystore', 'storage', 'upgrade'] as const

/** The device as the gateway sees it through the actors' read models. */
export interface DeviceView {
  system: SystemState
  identity: IdentityState
  keystore: KeystoreState
  storage: StorageState
  upgrade: UpgradeState
}

/** Every read model, or nothing: half a view of the device is not enough to apply its rules. */
export function deviceView(bus: GatewayBus): DeviceView | undefined {
  const system = bus.readModel<SystemState>('system')
  const identity = bus.readModel<IdentityState>('auth')
  const keystore = bus.readModel<KeystoreState>('keystore')
  const storage = bus.readModel<StorageState>('storage')
  const upgrade = bus.readModel<UpgradeState>('upgrade')
  return system && identity && keystore && storage && upgrade
    ? { system, identity, keystore, storage, upgrade }
    : undefined
}

const FLS_INTEGRITY = 0x08

/**
 * fls_state as the health machine (system service) owns it. The keystore's faults and a journal
 * history that does not verify reach it through the bus and are journaled there; they count here
 * at once, so that no request slips through in between.
 */
export function deviceFailState({ system, identity, keystore }: DeviceView): number {
  return system.status.fls_state | keystore.fls | (identity.intact ? 0 : FLS_INTEGRITY)
}
