import type { Logger } from 'pino'
import type { CryptoEngine, PostQuantum, RandomSource } from '../../hal/index.js'
import type { CommandReply, CommandRequest, IdentityState, JournalEntry } from '../../protocol/index.js'
import type { BearerGuard } from '../host/index.js'
import type { ExpandedKeys } from './crypto-expanded-keys.js'
import type { KeyLifecycles } from './key-lifecycles.js'
import type { KeyRepository } from './key-repository.js'

/** What the key store's operations (key management, crypto) may use of it: not the actor itself. */
export interface KeystoreContext {
  readonly engine: CryptoEngine
  readonly pqc: PostQuantum
  /** Expanded post-quantum secret keys of stored keys; wiped as their keys go (on `publish`). */
  readonly expanded: ExpandedKeys
  readonly repository: KeyRepository
  /** Each key's lifecycle machine: whether it serves (see `storedKey`), and its journaled transitions. */
  readonly keys: KeyLifecycles
  readonly random: RandomSource
  /** Its own check of the caller's bearer token. */
  readonly guard: BearerGuard
  readonly logger: Logger
  readonly identityState: IdentityState | undefined
  /** The DIAG build (hemd --diag): key list entries carry `_addr` and `_len`. */
  readonly diag?: boolean
  /** Seconds since the epoch, by the device clock. */
  now(): number
  publish(): void
  /** Why keys cannot be served now, or undefined when they can. */
  unavailable(): CommandReply | undefined
  /** Journals the scope failure of a request that should not have come this far, and answers 403. */
  denied(req: CommandRequest): Promise<CommandReply>
  journal(entries: JournalEntry[]): Promise<void>
}
