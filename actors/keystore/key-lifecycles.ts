import type { AnyMachineSnapshot } from 'xstate'
import type { JournalEntry } from '../../protocol/index.js'
import { IN_SERVICE, type KeyEvent, keyLifecycleMachine, machineRegistry, versioned } from '../../machines/index.js'
import { type JournalPort, MachineRunner } from '../host/index.js'
import type { KeyRepository } from './key-repository.js'

type KeyRunner = MachineRunner<typeof keyLifecycleMachine>

/** Where every key starts: nothing journaled yet. Snapshots are immutable, so one serves all. */
const CREATED = keyLifecycleMachine.resolveState({ value: 'created', context: {} })

/** Where a boot finds each key its repository holds (the machine's BOOT: a deletion never journaled did not happen). */
const STORED = keyLifecycleMachine.resolveState({ value: 'in_service', context: {} })

/**
 * The key lifecycle machine of every key the store knows (machines/key-lifecycle.ts), by KID,
 * each run by a MachineRunner that journals its transitions. Only keys in a final state leave,
 * so the map holds the stored keys and the invalid ones of this boot.
 */
export class KeyLifecycles {
  readonly #runners = new Map<string, KeyRunner>()

  /** `repository`: the keys it opened with are in service, as a boot finds them. */
  constructor(
    private readonly journal: JournalPort,
    repository: Pick<KeyRepository, 'keys'>,
  ) {
    for (const { kid } of repository.keys()) this.#runners.set(kid, this.#runner(kid, STORED))
  }

  /**
   * Whether the key serves now: a map lookup and a tag, nothing allocated, as every crypto
   * operation asks it.
   */
  serves(kid: string): boolean {
    return this.#runners.get(kid)?.snapshot.hasTag(IN_SERVICE) === true
  }

  /** Whether the machine of `kid` takes `event` now; a KID no key has is a key about to be created. */
  can(kid: string, event: KeyEvent): boolean {
    return (this.#runners.get(kid)?.snapshot ?? CREATED).can(event)
  }

  /** The state of `kid`'s machine, as TRANSITION records name it; undefined for a KID no key has. */
  state(kid: string): string | undefined {
    return this.#runners.get(kid)?.state
  }

  /**
   * Decides, journals (the transition and `entries`) and adopts, as MachineRunner.send does:
   * EventRefusedError when the machine does not take the event. A key whose machine ends is forgotten.
   */
  async send(kid: string, event: KeyEvent, entries: JournalEntry[] = []): Promise<void> {
    let runner = this.#runners.get(kid)
    if (!runner) {
      runner = this.#runner(kid, CREATED)
      this.#runners.set(kid, runner)
    }
    try {
      await runner.send(event, entries)
    } finally {
      if (runner.snapshot.status === 'done' || runner.snapshot === CREATED) this.#runners.delete(kid)
    }
  }

  /** Keys a restore stored: in service, as a boot finds its repository's (the RESTORE_KEYS records say so). */
  adopt(kids: readonly string[]): void {
    for (const kid of kids) this.#runners.set(kid, this.#runner(kid, STORED))
  }

  /** A wipeout: every key is destroyed (the auth actor journals it; replay ends every key there too). */
  clear(): void {
    this.#runners.clear()
  }

  #runner(kid: string, snapshot: AnyMachineSnapshot): KeyRunner {
    return new MachineRunner(versioned(machineRegistry.key, kid), this.journal, snapshot)
  }
}
