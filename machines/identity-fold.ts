import type { AnyMachineSnapshot } from 'xstate'
import { LogResult, LogType, type TransitionData, type Variant } from '../protocol/index.js'
import { factoryConfig, reduceConfig, type ConfigChanges, type ConfigEvent, type DeviceConfig } from './config.js'
import { machineRegistry } from './registry.js'
import { replayTransitions } from './replay.js'

const { personalisation, provisioning } = machineRegistry

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
  /**
   * The phase of the last DISK_FORMAT record since personalisation last entered `formatting`: undefined
   * when no run of that format has started, `start` when the last one never ended (a power cut).
   */
  lastFormat: string | undefined
  /** A wipeout whose erasure of the enclave's owner material and the disks has not been journaled as done. */
  erasurePending: boolean
}

/** Journal data of DISK_FORMAT: where a format of the disks is (start, done, failed, cancelled, interrupted). */
export interface DiskFormatData {
  phase: 'start' | 'done' | 'failed' | 'cancelled' | 'interrupted'
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

/** The only types of record the identity is folded from: a boot reads no others. */
export const IDENTITY_RECORD_TYPES: ReadonlySet<number> = new Set([
  LogType.TRANSITION,
  LogType.DEVICE_INITED,
  LogType.CONFIG_UPDATED,
  LogType.DISK_FORMAT,
  LogType.WIPEOUT_ERASE,
  LogType.RESTORE,
])

/**
 * The change of configuration a journal record stands for, if any: a wipeout, a personalisation (or a restore) or an
 * update.
 */
export function configEvent(record: IdentityRecord): ConfigEvent | undefined {
  // Most records are none of these (an offline replay folds every record): their data is not decoded at all.
  if (!IDENTITY_RECORD_TYPES.has(record.type) || (record.type !== LogType.TRANSITION && record.result !== LogResult.OK))
    return undefined
  const data = record.decoded
  if (!data) return undefined
  if (record.type === LogType.TRANSITION) {
    const transition = data as unknown as TransitionData
    return transition.machine === personalisation.machine.id && transition.to === 'fresh'
      ? { kind: 'wiped' }
      : undefined
  }
  if (record.result !== LogResult.OK) return undefined
  // A restore from a backup (docs/backup.md) personalises with the backup's configuration.
  if (record.type === LogType.DEVICE_INITED || record.type === LogType.RESTORE) {
    const { cfg, instanceid, at } = data as unknown as PersonalisedData
    return { kind: 'personalised', cfg, instanceid, at }
  }
  if (record.type === LogType.CONFIG_UPDATED && 'changed' in data) {
    const { changed, uts } = data as unknown as UpdatedData
    return { kind: 'updated', changed, uts }
  }
  return undefined
}

/**
 * Personalisation, provisioning and configuration as the journal tells them, folded through
 * the same machines and reducer the identity actor runs live; and what a boot must finish: a
 * format of the disks, a wipeout's erasure.
 */
export function foldIdentity(records: Iterable<IdentityRecord>, variant: Variant): IdentityFacts {
  const transitions: TransitionData[] = []
  let config = factoryConfig(variant)
  let lastFormat: string | undefined
  let erasurePending = false
  for (const record of records) {
    if (record.type === LogType.TRANSITION && record.decoded) {
      const transition = record.decoded as unknown as TransitionData
      transitions.push(transition)
      if (transition.machine === personalisation.machine.id) {
        if (transition.to === 'formatting') lastFormat = undefined
        // A wipeout erases at once; a new owner (personalisation) finds the erasure done or redone at boot.
        erasurePending = transition.to === 'fresh'
      }
    } else if (record.type === LogType.DISK_FORMAT && record.decoded) {
      lastFormat = String((record.decoded as unknown as DiskFormatData).phase)
    } else if (record.type === LogType.WIPEOUT_ERASE) {
      erasurePending = record.result !== LogResult.OK
    }
    const event = configEvent(record)
    if (event) config = reduceConfig(config, event, variant)
  }
  return {
    personalisation: replayTransitions(personalisation.machine, personalisation.version, transitions, { variant }),
    provisioning: replayTransitions(provisioning.machine, provisioning.version, transitions),
    config,
    lastFormat,
    erasurePending,
  }
}
