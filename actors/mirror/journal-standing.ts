// Where the journal stands against a record the device once signed into its stream: a journal
// never takes back a durable record (the mirror sends no other), so one that no longer holds it,
// and did not go on past it, went back: the data dir was rolled back or restored from a copy.

import { bytesEqual, decodeRecordData, parseLinkData } from '../../eventstore/index.js'
import { LogType } from '../../protocol/index.js'
import { JournalTail, type DurableJournal, type RecordPosition } from './journal-tail.js'

/**
 * - `holds`: the journal has the record with that chain head;
 * - `went-on`: its file is gone (deleted) and the next file the journal has links to it or to a later one;
 * - `behind`: anything else: the file ends before the record, differs there, or the journal never came past it.
 */
export type Standing = 'holds' | 'went-on' | 'behind'

export async function journalStanding(
  journal: DurableJournal,
  at: RecordPosition & { head: Uint8Array },
): Promise<Standing> {
  const tail = new JournalTail(journal, at)
  const first = await tail.next()
  if (first?.file === at.file && first.seq === at.seq) return bytesEqual(first.head, at.head) ? 'holds' : 'behind'
  if (!first || (await journal.media.list()).includes(at.file)) return 'behind'
  // The first record of the next file is its KEY_INIT; its LINK follows.
  const link = first.seq === 0 ? await tail.next() : undefined
  const prev = link?.record.type === LogType.LINK ? linkedFile(link.record) : undefined
  return prev !== undefined && prev >= at.file ? 'went-on' : 'behind'
}

function linkedFile(record: Parameters<typeof decodeRecordData>[0]): string | undefined {
  try {
    return parseLinkData(decodeRecordData(record))?.prev ?? undefined
  } catch {
    return undefined
  }
}
