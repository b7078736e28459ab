import type { JournalCrypto } from './journal-crypto.js'
import { readLines } from './read-lines.js'

/** The chain head right after the record with `seq`, if the file has one. */
export function headAfter(
  id: string,
  bytes: Uint8Array,
  seq: number,
  crypto: Pick<JournalCrypto, 'chainStart' | 'chainStep'>,
): Uint8Array | undefined {
  let head = crypto.chainStart(id)
  for (const entry of readLines(bytes)) {
    head = crypto.chainStep(head, entry.bytes)
    if (entry.kind === 'record' && entry.record.seq === seq) return head
  }
  return undefined
}
