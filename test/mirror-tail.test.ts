// The mirror's journal tail: it hands out every record once, in order, with the exact stored
// bytes, only once they are durable, and starts where it is told (the stream's last record).

import { appendFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { Journal } from '../eventstore/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { JournalTail, type DurableJournal, type TailRecord } from '../actors/mirror/journal-tail.js'
import { options, readSet, records } from './helpers/journal-fixtures.js'

const entry = (n: number) => ({ type: LogType.CONFIG_UPDATED, result: LogResult.OK, data: { n } })

async function drain(tail: JournalTail): Promise<TailRecord[]> {
  const out: TailRecord[] = []
  for (let record = await tail.next(); record; record = await tail.next()) out.push(record)
  return out
}

const live = (media: FileJournalMedia, journal: Journal): DurableJournal => ({
  media,
  durable: () => ({ file: journal.fileId, head: journal.head }),
})

t.test('every record once, in order, byte for byte, across rotated files', async (t) => {
  const media = new FileJournalMedia(t.testdir())
  const journal = await Journal.open(options(media, { rotateBytes: 1_000 }))
  t.teardown(() => journal.close())
  for (let i = 0; i < 40; i++) await journal.append([entry(i)])
  const files = await readSet(media)
  t.ok(files.length > 2, `the journal rotated (${files.length} files)`)
  const handed = await drain(new JournalTail(live(media, journal)))
  t.equal(
    handed.length,
    files.reduce((n, f) => n + records(f.bytes).length, 0),
    'one per record',
  )
  for (const file of files) {
    const mine = handed.filter((r) => r.file === file.id)
    t.same(
      mine.map((r) => r.seq),
      records(file.bytes).map((r) => r.seq),
      `${file.id}: seqs in order`,
    )
    t.ok(
      Buffer.concat(mine.map((r) => r.bytes)).equals(file.bytes),
      `${file.id}: the bytes are the file's (the banner with seq 0)`,
    )
  }
})

t.test('only what is durable: a head taken earlier, and bytes no append stored', async (t) => {
  const dir = t.testdir()
  const media = new FileJournalMedia(dir)
  const journal = await Journal.open(options(media))
  t.teardown(() => journal.close())
  await journal.append([entry(1)])
  const before = { file: journal.fileId, head: journal.head }
  await journal.append([entry(2), entry(3)])
  let durable = before
  const tail = new JournalTail({ media, durable: () => durable })
  t.same(
    (await drain(tail)).map((r) => r.seq),
    [0, 1, 2],
    'up to the durable head, though more is in the file',
  )
  // Bytes in the file that no append acknowledged (a write that fails and will be cut back).
  await appendFile(join(dir, `${journal.fileId}.log`), '5|0|12|0||||AAAAAAAAAAAAAAAAAAAAAA\n')
  durable = { file: journal.fileId, head: journal.head }
  t.same(
    (await drain(tail)).map((r) => r.seq),
    [3, 4],
    'the rest once durable; never the unacknowledged line',
  )
  t.equal(await tail.next(), undefined, 'and nothing after it')
})

t.test('starts at the record it is given, or at the next file when that one is gone', async (t) => {
  const media = new FileJournalMedia(t.testdir())
  const journal = await Journal.open(options(media, { rotateBytes: 1_000 }))
  t.teardown(() => journal.close())
  for (let i = 0; i < 20; i++) await journal.append([entry(i)])
  const [first] = await media.list()
  const from = await drain(new JournalTail(live(media, journal), { file: first!, seq: 3 }))
  t.same([from[0]!.file, from[0]!.seq], [first, 3], 'the record given first (the mirror checks it against the stream)')
  const all = await drain(new JournalTail(live(media, journal)))
  t.same(from, all.slice(all.findIndex((r) => r.file === first && r.seq === 3)), 'then all after it')
  const missing = await drain(new JournalTail(live(media, journal), { file: '00000001', seq: 5 }))
  t.same(
    [missing[0]!.file, missing[0]!.seq],
    [first, 0],
    'a file not on the media (deleted): the next file, from its start',
  )
})
