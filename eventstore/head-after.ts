import type { JournalCrypto } from './journal-crypto.js'
import { findRecordLine } from './read-lines.js'

/** The chain head right after the record with `seq`, if the file has one. */
export function headAfter(
  id: string,
  bytes: Uint8Array,
  seq: number,
  crypto: Pick<JournalCrypto, 'chainStart' | 'chainStep'>,
): Uint8Array | undefined {
  // Only the sought line is parsed: the boot's anchor check runs this over the newest file.
  let head = crypto.chainStart(id)
  const found = findRecordLine(bytes, seq, (line) => (head = crypto.chainStep(head, line)))
  return found && head
}
