import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { decodeRecordData, readLines, verifyJournal } from '../../eventstore/index.js'
import type { JournalPort } from '../../actors/host/journal-port.js'
import { type JournalEntry, type RecordLine, type VerifyResult } from '../../protocol/journal.js'

export interface JournalFiles {
  files: { id: string; bytes: Uint8Array }[]
  records: (RecordLine & { file: string; decoded: Record<string, unknown> | undefined })[]
}

/** Every journal file of a data dir, parsed. */
export async function readJournal(dataDir: string): Promise<JournalFiles> {
  const dir = join(dataDir, 'journal')
  const names = (await readdir(dir)).filter((n) => /^[0-9a-f]{8}\.log$/.test(n)).sort()
  const files = await Promise.all(names.map(async (n) => ({ id: n.slice(0, 8), bytes: await readFile(join(dir, n)) })))
  const records: JournalFiles['records'] = []
  for (const file of files) {
    for (const line of readLines(file.bytes)) {
      if (line.kind === 'record')
        records.push({ ...line.record, file: file.id, decoded: decodeRecordData(line.record) })
    }
  }
  return { files, records }
}

/**
 * Verifies a data dir's journal as the device reads its own: with `allowOpenTail` (a running
 * device), the open file's records after its last seal are taken as its writer's, as readHistory does.
 */
export async function verifyDataDir(
  dataDir: string,
  publicKey: Uint8Array,
  allowOpenTail = false,
): Promise<VerifyResult> {
  const { files } = await readJournal(dataDir)
  return verifyJournal(files, publicKey, { allowOpenTail, trustOpenTail: allowOpenTail })
}

/** A journal port that keeps what it is given, in memory, always intact. */
export function recordingJournal(): { journal: JournalPort; journaled: JournalEntry[] } {
  const journaled: JournalEntry[] = []
  const journal: JournalPort = {
    append: async (entries) => (journaled.push(...entries), entries.map((_, seq) => ({ file: '00000000', seq }))),
    status: async () => ({ fileId: '00000000', intact: true }),
    head: noHead,
  }
  return { journal, journaled }
}

/** For a test journal port that keeps no files: asking it for a signed head is the test's mistake. */
export async function noHead(): Promise<never> {
  throw new Error('this test journal keeps no head')
}
