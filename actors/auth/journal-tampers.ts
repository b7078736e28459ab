// The tampers the journal's boot check found, as the auth reads them beside the identity's records:
// an enclave that holds an owner's keys under a journal that says the device is new (deleted whole,
// eventstore/journal-anchoring.ts) must not take a new owner, at that boot or any after.

import type { HistoryRecord } from '../../eventstore/index.js'
import { IDENTITY_RECORD_TYPES } from '../../machines/index.js'
import { LogResult, LogType } from '../../protocol/index.js'

/** The types of record the auth reads at boot: the identity's, and the fail states raised. */
export const AUTH_RECORD_TYPES: ReadonlySet<number> = new Set([...IDENTITY_RECORD_TYPES, LogType.NON_SECURE_STATE])

/** Passes `records` through, noting in `seen` a NON_SECURE_STATE that the journal's check raised (source journal). */
export function* notingJournalTampers(
  records: Iterable<HistoryRecord>,
  seen: { tamper: boolean },
): Generator<HistoryRecord> {
  for (const record of records) {
    if (record.type === LogType.NON_SECURE_STATE && record.result !== LogResult.OK && !seen.tamper)
      seen.tamper = record.decoded?.source === 'journal'
    yield record
  }
}
