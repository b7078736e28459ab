// Every key's lifecycle machine (machines/key-lifecycle.ts) rebuilt from the journal: one fold per
// KID, moved by the key store's TRANSITION records, and by the KEY_* records of builds older than
// the machine, which journaled no transitions.

import { transition } from 'xstate'
import { isKeyType, LogResult, LogType, restoredKeys, type TransitionData } from '../protocol/index.js'
import {
  type KeyEvent,
  keyLifecycleMachine,
  keyLifecycleVersion,
  ReplayError,
  stateName,
  TransitionFold,
} from '../machines/index.js'
import type { KeyRecordView } from './key-catalogue.js'

const KID = /^[0-9a-f]{32}$/

/** The records that add a key (when their `type` names a key type: a failed derive names none). */
const ADDS: ReadonlySet<number> = new Set([LogType.KEY_GENERATION, LogType.KEY_IMPORT, LogType.KEY_DERIVE])

/**
 * The key folds. A build with the machine journals each transition in the same append as its KEY_*
 * record, before it: ADD before the key's KEY_GENERATION (so its fold is in service when that record
 * comes), ADD_FAILED before its ERROR twin and DELETE before KEY_DELETE (so its fold has ended). A
 * KEY_* record that finds the fold where it would be without its transition was written by an older
 * build: the transition is derived from it, through the machine all the same, and records of keys
 * those builds made can be followed by a newer build's transitions.
 */
export class KeyFolds {
  readonly #folds = new Map<string, TransitionFold>()

  /** Whether the record is a key machine's transition. */
  owns(record: TransitionData): boolean {
    return record.machine === keyLifecycleMachine.id
  }

  apply(record: TransitionData): void {
    const kid = record.instance
    if (kid === undefined || !KID.test(kid)) throw new ReplayError("a key's transition names no KID as its instance")
    this.#fold(kid).apply(record)
    this.#settle(kid)
  }

  /** A KEY_* record (any other record is ignored): the transition an older build did not journal. */
  applyKeyRecord(record: KeyRecordView): void {
    const { type, result } = record
    // The keys of a restore (docs/backup.md) come into service as the key store stores them, with no transition each.
    if (type === LogType.RESTORE_KEYS && result === LogResult.OK) {
      for (const { kid } of restoredKeys(record.decoded) ?? []) if (!this.#folds.has(kid)) this.#derive(kid, 'ADD')
      return
    }
    const data = record.decoded ?? {}
    const kid = typeof data.kid === 'string' && KID.test(data.kid) ? data.kid : undefined
    if (!kid) return
    const state = this.#folds.get(kid)?.state
    if (ADDS.has(type) && isKeyType(data.type)) {
      if (result === LogResult.OK && state === undefined) this.#derive(kid, 'ADD')
      else if (result === LogResult.ERROR && state === 'in_service') this.#derive(kid, 'ADD_FAILED')
    } else if (type === LogType.KEY_DELETE && result === LogResult.OK && state === 'in_service') {
      this.#derive(kid, 'RETIRE')
      this.#derive(kid, 'DELETE')
    }
  }

  /** A power-up: each key takes BOOT, as the key store rebuilds its keys from its repository. */
  boot(): void {
    for (const kid of [...this.#folds.keys()]) this.#derive(kid, 'BOOT')
  }

  /** A wipeout: every key is destroyed. */
  clear(): void {
    this.#folds.clear()
  }

  /** Each key's state by KID, in the order the keys came. */
  states(): Record<string, string> {
    return Object.fromEntries([...this.#folds].map(([kid, fold]) => [kid, fold.state]))
  }

  /** The event as a record, through the same checks as a journaled one; nothing if the machine does not take it. */
  #derive(kid: string, type: KeyEvent['type']): void {
    const fold = this.#fold(kid)
    if (fold.snapshot.can({ type })) {
      const to = stateName(transition(keyLifecycleMachine, fold.snapshot, { type })[0])
      const { id: machine } = keyLifecycleMachine
      fold.apply({ machine, instance: kid, version: keyLifecycleVersion, from: fold.state, to, event: type })
    }
    this.#settle(kid)
  }

  #fold(kid: string): TransitionFold {
    let fold = this.#folds.get(kid)
    if (!fold) {
      fold = new TransitionFold(keyLifecycleMachine, keyLifecycleVersion, undefined, kid)
      this.#folds.set(kid, fold)
    }
    return fold
  }

  /** A key whose machine ended is gone (its KID may name a new key); one that never left `created` was never there. */
  #settle(kid: string): void {
    const fold = this.#folds.get(kid)
    if (fold && (fold.snapshot.status === 'done' || fold.state === 'created')) this.#folds.delete(kid)
  }
}
