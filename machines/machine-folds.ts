import type { AnyMachineSnapshot } from 'xstate'
import type { TransitionData, Variant } from '../protocol/index.js'
import { registeredMachines, type RegisteredMachine } from './registry.js'
import { ReplayError, TransitionFold } from './replay.js'

/**
 * The folds of every registered machine of one lifetime on a variant, one per instance: what
 * `hem-audit replay` moves with the recorded transitions. Machines run one per subject (a key
 * per KID) have folds of their own (audit/key-replay.ts).
 */
export class MachineFolds {
  private readonly folds = new Map<string, TransitionFold>()

  constructor(
    private readonly variant: Variant,
    lifetime: RegisteredMachine['lifetime'],
  ) {
    for (const entry of registeredMachines.filter((m) => m.lifetime === lifetime)) {
      for (const { instance, input } of entry.instances(variant))
        this.folds.set(
          key(entry.machine.id, instance),
          new TransitionFold(entry.machine, entry.version, input, instance),
        )
    }
  }

  /** Whether one of these machines (and instances) is the record's. */
  owns(record: TransitionData): boolean {
    return this.folds.has(key(record.machine, record.instance))
  }

  /** Moves the record's fold; throws ReplayError where none of these machines is the record's or it refuses. */
  apply(record: TransitionData): void {
    const fold = this.folds.get(key(record.machine, record.instance))
    if (!fold) throw new ReplayError(`no ${machineName(record)} machine runs on variant ${this.variant}`)
    fold.apply(record)
  }

  /** The snapshot of a machine's instance, undefined where the variant runs no such copy. */
  snapshot(machine: string, instance?: string): AnyMachineSnapshot | undefined {
    return this.folds.get(key(machine, instance))?.snapshot
  }

  /** The state name of a machine's instance, undefined where the variant runs no such copy. */
  state(machine: string, instance?: string): string | undefined {
    return this.folds.get(key(machine, instance))?.state
  }
}

const key = (machine: string, instance: string | undefined) =>
  instance === undefined ? machine : `${machine} ${instance}`

function machineName(transition: Pick<TransitionData, 'machine' | 'instance'>): string {
  return transition.instance === undefined
    ? `'${transition.machine}'`
    : `'${transition.machine}' instance '${transition.instance}'`
}
