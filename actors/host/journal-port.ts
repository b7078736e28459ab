import type { JournalEntry, JournalPosition, MirrorStatus, SignedHead } from '../../protocol/index.js'

/** How an actor writes to the journal: directly in one process, over the bus when split. */
export interface JournalPort {
  append(entries: JournalEntry[]): Promise<JournalPosition[]>
  status(): Promise<JournalStatus>
  /** The newest durable record and the chain head after it, signed now by the log key. */
  head(): Promise<SignedHead>
}

export interface JournalStatus {
  fileId: string
  /** False when recovery at boot found the previous file's chain, MACs or seals broken. */
  intact: boolean
  /** The unsigned anchor of an older build that this boot (an upgrade's trial) re-wrote signed. */
  anchorMigrated?: { file: string; seq: number }
  /** The journal mirror's state, in the eventstore's read model, on a device given a fleet backend. */
  mirror?: MirrorStatus
}
