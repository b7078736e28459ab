import type { JournalEntry, JournalPosition } from '../../protocol/index.js'

/** How an actor writes to the journal: directly in one process, over the bus when split. */
export interface JournalPort {
  append(entries: JournalEntry[]): Promise<JournalPosition[]>
  status(): Promise<JournalStatus>
}

export interface JournalStatus {
  fileId: string
  /** False when recovery at boot found the previous file's chain, MACs or seals broken. */
  intact: boolean
}
