import { chainStart, chainStep } from './chain.js'
import { readLines } from './read-lines.js'

/** The chain head right after the record with `seq`, if the file has one. */
export function headAfter(id: string, bytes: Uint8Array, seq: number): Uint8Array | undefined {
  let head = chainStart(id)
  for (const entry of readLines(bytes)) {
    head = chainStep(head, entry.bytes)
    if (entry.kind === 'record' && entry.record.seq === seq) return head
  }
  return undefined
}
