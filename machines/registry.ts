// Every machine of the device, and what each needs beside its definition: the instances a device
// runs, how long its state lives, the actor that runs it and the model test that walks it. The
// actors build their runners from it, `hem-audit replay` its folds, and test/machine-registry
// checks that no machine is missing any of them.

import type { AnyStateMachine } from 'xstate'
import type { Variant } from '../protocol/index.js'
import { diskMachine, diskVersion } from './disk.js'
import { extAuthMachine, extAuthVersion } from './ext-auth.js'
import { healthMachine, healthVersion } from './health.js'
import { keyLifecycleMachine, keyLifecycleVersion } from './key-lifecycle.js'
import { lifecycleMachine, lifecycleVersion } from './lifecycle.js'
import { personalisationMachine, personalisationVersion } from './personalisation.js'
import { provisioningMachine, provisioningVersion } from './provisioning.js'
import type { VersionedMachine } from './types.js'
import { upgradeMachine, upgradeVersion } from './upgrade.js'

/** One running copy of a machine: its name in TRANSITION records (none for a machine that runs once) and input. */
export interface MachineInstance {
  instance?: string
  input?: unknown
}

export interface RegisteredMachine<M extends AnyStateMachine = AnyStateMachine> extends VersionedMachine<M> {
  /**
   * `device`: part of the device's identity, folded across every boot; `boot`: starts afresh at
   * every boot (the runtime builds it from its own start, and replay starts it again at each).
   */
  lifetime: 'device' | 'boot'
  /** The copies a device of the variant runs from its start, each with its input. */
  instances: (variant: Variant) => readonly MachineInstance[]
  /**
   * What names the copies a machine runs one of per subject, made and ended as the device goes
   * (a key's by its KID): none from the start, and replay folds them in a fold of their own.
   */
  subjects?: string
  /** The unit under actors/ whose actor runs it. */
  actor: string
  /** The model test that walks all its states and transitions, generated with xstate/graph. */
  modelTest: string
}

const once = (input?: unknown): readonly MachineInstance[] => [input === undefined ? {} : { input }]

export const machineRegistry = {
  personalisation: {
    machine: personalisationMachine,
    version: personalisationVersion,
    lifetime: 'device',
    instances: (variant) => once({ variant }),
    actor: 'auth',
    modelTest: 'test/model-personalisation.test.ts',
  },
  provisioning: {
    machine: provisioningMachine,
    version: provisioningVersion,
    lifetime: 'device',
    instances: () => once(),
    actor: 'auth',
    modelTest: 'test/model-provisioning.test.ts',
  },
  disk: {
    machine: diskMachine,
    version: diskVersion,
    lifetime: 'boot',
    instances: (variant) =>
      variant === 'P' ? ([0, 1] as const).map((disk) => ({ instance: String(disk), input: { disk } })) : [],
    actor: 'storage',
    modelTest: 'test/model-disk.test.ts',
  },
  key: {
    machine: keyLifecycleMachine,
    version: keyLifecycleVersion,
    lifetime: 'device',
    instances: () => [],
    subjects: 'KID',
    actor: 'keystore',
    modelTest: 'test/model-key-lifecycle.test.ts',
  },
  upgrade: {
    machine: upgradeMachine,
    version: upgradeVersion,
    lifetime: 'boot',
    instances: () => (['fw', 'ui'] as const).map((kind) => ({ instance: kind, input: { kind } })),
    actor: 'upgrade',
    modelTest: 'test/model-upgrade.test.ts',
  },
  health: {
    machine: healthMachine,
    version: healthVersion,
    lifetime: 'boot',
    instances: () => once(),
    actor: 'system',
    modelTest: 'test/model-health.test.ts',
  },
  lifecycle: {
    machine: lifecycleMachine,
    version: lifecycleVersion,
    lifetime: 'boot',
    instances: () => once(),
    actor: 'system',
    modelTest: 'test/model-lifecycle.test.ts',
  },
  // One per challenge the auth actor gives an external authenticator, made and ended as they come and go: never
  // journaled (machines/ext-auth.ts), so none runs from the start and replay has nothing of it to fold.
  extAuth: {
    machine: extAuthMachine,
    version: extAuthVersion,
    lifetime: 'boot',
    instances: () => [],
    actor: 'auth',
    modelTest: 'test/model-ext-auth.test.ts',
  },
} as const satisfies Record<string, RegisteredMachine>

export type MachineId = keyof typeof machineRegistry

/** The registered machines, in the order above. */
export const registeredMachines: readonly RegisteredMachine[] = Object.values(machineRegistry)

/** A registered machine's copy as a runner takes it: the machine, its version and instance name. */
export function versioned<M extends AnyStateMachine>(
  entry: RegisteredMachine<M>,
  instance?: string,
): VersionedMachine<M> {
  return instance === undefined
    ? { machine: entry.machine, version: entry.version }
    : { machine: entry.machine, version: entry.version, instance }
}
