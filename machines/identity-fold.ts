import type { AnyMachineSnapshot } from 'xstate'
import { LogResult, LogType, type TransitionData } from '../eventstore/types.js'
import type { Variant } from '../hal/types.js'
import { factoryConfig, reduceConfig, type ConfigChanges, type DeviceConfig } from './config.js'
import { personalisationMachine, personalisationVersion } from './personalisation.js'
import { provisioningMachine, provisioningVersion } from './provisioning.js'
import { replayTransitions } from './replay.js'

/** The journal records the identity aggregate is rebuilt from. */
export interface IdentityRecord {
  type: number
  result: number
  decoded: Record<string, unknown> | undefined
}

export interface IdentityFacts {
  personalisation: AnyMachineSnapshot
  provisioning: AnyMachineSnapshot
  config: DeviceConfig
}

/** Journal data of DEVICE_INITED: the public part of the personalisation `cfg`. */
export interface PersonalisedData {
  cfg: ConfigChanges
  instanceid: string
  at: number
}

/** Journal data of a successful CONFIG_UPDATED: plain fields that changed, and the new `uts`. */
export interface UpdatedData {
  changed: ConfigChanges
  uts: number
}

/**
 * Personalisation, provisioning and configuration as the journal tells them, folded through
 * the same machines and reducer the identity actor runs live.
 */
export function foldIdentity(records: Iterable<IdentityRecord>, variant: Variant): IdentityFacts {
  const transitions: TransitionData[] = []
  let config = factoryConfig(variant)
  for (const record of records) {
    const data = record.decoded
    if (record.type === LogType.TRANSITION && data) {
      const transition = data as unknown as TransitionData
      transitions.push(transition)
      if (transition.machine === personalisationMachine.id && transition.to === 'fresh') {
        config = reduceConfig(config, { kind: 'wiped' }, variant)
      }
    } else if (record.type === LogType.DEVICE_INITED && record.result === LogResult.OK && data) {
      const { cfg, instanceid, at } = data as unknown as PersonalisedData
      config = reduceConfig(config, { kind: 'personalised', cfg, instanceid, at }, variant)
    } else if (record.type === LogType.CONFIG_UPDATED && record.result === LogResult.OK && data && 'changed' in data) {
      const { changed, uts } = data as unknown as UpdatedData
      config = reduceConfig(config, { kind: 'updated', changed, uts }, variant)
    }
  }
  return {
    personalisation: replayTransitions(personalisationMachine, personalisationVersion, transitions, { variant }),
    provisioning: replayTransitions(provisioningMachine, provisioningVersion, transitions),
    config,
  }
}
