import type { Clock, EnclaveSigner, JournalMedia } from '../hal/index.js'
import type { JournalAnchorStore } from './journal-anchor.js'

export interface JournalLogger {
  warn(obj: object, msg: string): void
  info(obj: object, msg: string): void
}

export interface JournalOptions {
  media: JournalMedia
  /** The log key: signs each file's key K and every seal. */
  signer: EnclaveSigner
  clock: Clock
  /** Source of the per-file keys K. */
  random: (n: number) => Uint8Array
  /** First line of every file: a `#` comment without newline; `{id}` is replaced by the file id. */
  banner: string
  /** Seal after this many records since the last seal (default 256). */
  sealEvery?: number
  /** Seal anything unsealed this often (default 30000 ms). */
  sealIntervalMs?: number
  /** Start a new file once one reaches this size (default 8 MiB). */
  rotateBytes?: number
  logger?: JournalLogger
  /**
   * Where the last durable seal is anchored outside the files (the enclave): checked at open, where
   * a journal that does not reach it is reported as not intact, and moved after every seal.
   */
  anchor?: JournalAnchorStore
  /**
   * This boot is the trial of a newly installed firmware: an unsigned anchor of an older build is
   * accepted once, if it agrees with the files, and re-written signed (journal-anchoring.ts).
   */
  migrateUnsignedAnchor?: boolean
  /**
   * Whether the enclave holds what only a personalised device has (the owner's credentials): a
   * journal with no file and no anchor then was deleted, a tamper, not a new device's.
   */
  personalised?: () => boolean
  /**
   * Have every file checked on worker threads, recovery waiting for the newest's check: for a
   * process that reads the whole history next (readHistory finds the checks done). Default false.
   * A worker warmUpChecks started takes the older files (checked-segments.ts).
   */
  prefetchChecks?: boolean
}
