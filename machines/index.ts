export { lifecycleMachine, lifecycleVersion } from './lifecycle.js'
export type { VersionedMachine } from './types.js'
export {
  factoryConfig,
  nextUts,
  plainConfigFields,
  reduceConfig,
  type ConfigChanges,
  type ConfigEvent,
  type DeviceConfig,
  type PlainConfigField,
} from './config.js'
export { bootMode, disk1Cipher, diskMachine, diskVersion, type DiskNumber } from './disk.js'
export { extAuthMachine, extAuthVersion, type ExtAuthEvent, type ExtAuthKind } from './ext-auth.js'
export { healthMachine, healthVersion, type HealthEvent } from './health.js'
export { IN_SERVICE, keyLifecycleMachine, keyLifecycleVersion, type KeyEvent } from './key-lifecycle.js'
export { configEvent, type DiskFormatData, foldIdentity, IDENTITY_RECORD_TYPES } from './identity-fold.js'
export { personalisationMachine, personalisationVersion } from './personalisation.js'
export { provisioningMachine, provisioningVersion } from './provisioning.js'
export { ReplayError, stateName, TransitionFold } from './replay.js'
export {
  upgradeMachine,
  upgradeVersion,
  type UpgradeContext,
  type UpgradeEvent,
  type UpgradeKind,
  type VerifiedImage,
} from './upgrade.js'
export { MachineFolds } from './machine-folds.js'
export {
  machineRegistry,
  registeredMachines,
  versioned,
  type MachineId,
  type MachineInstance,
  type RegisteredMachine,
} from './registry.js'
