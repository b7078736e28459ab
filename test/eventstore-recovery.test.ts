import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import type { JournalMedia } from '../hal/types.js'
import { Journal, decodeRecordData, parseSealData, verifyJournal } from '../eventstore/index.js'
import { LogType } from '../protocol/journal.js'
import { START, chainOver, options, readSet, records, signer } from './helpers/journal-fixtures.js'

function lastSeal(bytes: Uint8Array) {
  const last = records(bytes).at(-1)!
  return last.type === LogType.SEAL ? parseSealData(decodeRecordData(last))?.reason : undefined
}

/**
 * Leaves a file as a crash would: the journal's bytes before its close seal.
 * Returns those bytes.
 */
async function crashedFile(dir: string, media: JournalMedia, entries = 3): Promise<{ id: string; bytes: Buffer }> {
  const journal = await Journal.open(options(media))
  for (let i = 0; i < entries; i++) await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0, data: { i } }])
  const bytes = Buffer.from(await media.read(journal.fileId))
  await journal.close()
  await writeFile(join(dir, `${journal.fileId}.log`), bytes)
  return { id: journal.fileId, bytes }
}

function linkOf(bytes: Uint8Array) {
  return decodeRecordData(records(bytes)[1]!)
}

t.test('a torn last line is cut and the file sealed as recovered', async (t) => {
  const dir = t.testdir()
  const media = new FileJournalMedia(dir)
  const crashed = await crashedFile(dir, media)
  const torn = '5|65a1b2c3|17|0||gaFp'
  await writeFile(join(dir, `${crashed.id}.log`), Buffer.concat([crashed.bytes, Buffer.from(torn)]))

  const journal = await Journal.open(options(media))
  t.same(journal.recovery, {
    previous: crashed.id,
    cutBytes: torn.length,
    sealedRecovered: true,
    intact: true,
    problems: [],
  })
  const recovered = await media.read(crashed.id)
  t.same(recovered.subarray(0, crashed.bytes.length), crashed.bytes, 'the good lines are untouched')
  t.equal(lastSeal(recovered), 'recovered')
  t.equal(records(recovered).at(-1)!.seq, 5)
  t.not(journal.fileId, crashed.id)
  t.same(linkOf(await media.read(journal.fileId)), { prev: crashed.id, head: chainOver(crashed.id, recovered), seq: 5 })
  await journal.close()
  t.same(verifyJournal(await readSet(media), signer.publicKey).problems, [])
})

t.test('a file left without a close seal gets a recovered seal', async (t) => {
  const dir = t.testdir()
  const media = new FileJournalMedia(dir)
  const crashed = await crashedFile(dir, media)
  const journal = await Journal.open(options(media))
  t.same(journal.recovery, { previous: crashed.id, cutBytes: 0, sealedRecovered: true, intact: true, problems: [] })
  t.equal(lastSeal(await media.read(crashed.id)), 'recovered')
  await journal.close()
  t.ok(verifyJournal(await readSet(media), signer.publicKey).ok)
})

t.test('two opens give two linked files that verify together', async (t) => {
  const media = new FileJournalMedia(t.testdir())
  const first = await Journal.open(options(media))
  await first.append([{ type: LogType.STARTUP, result: 0 }])
  await first.close()
  const second = await Journal.open(options(media))
  t.same(second.recovery, { previous: first.fileId, cutBytes: 0, sealedRecovered: false, intact: true, problems: [] })
  await second.close()
  const firstBytes = await media.read(first.fileId)
  t.equal(lastSeal(firstBytes), 'close', 'a closed file is left as it is')
  t.same(linkOf(await media.read(second.fileId)), {
    prev: first.fileId,
    head: chainOver(first.fileId, firstBytes),
    seq: 3,
  })
  t.same(await media.list(), [first.fileId, second.fileId])
  t.same(verifyJournal(await readSet(media), signer.publicKey).summary, {
    files: 2,
    records: 7,
    seals: 2,
    firstTime: START / 1000,
    lastTime: START / 1000,
  })
})

t.test('a broken previous file is reported, left alone, and linked at its last good record', async (t) => {
  const dir = t.testdir()
  const media = new FileJournalMedia(dir)
  const crashed = await crashedFile(dir, media, 4)
  const lines = crashed.bytes.toString('utf8').split('\n')
  // Line 5 holds record 3: change its result field; its MAC no longer matches.
  lines[4] = lines[4]!.replace(/^3\|([0-9a-f]+)\|17\|0\|/, '3|$1|17|1|')
  const tampered = Buffer.from(lines.join('\n'))
  await writeFile(join(dir, `${crashed.id}.log`), tampered)
  const goodPart = Buffer.from(lines.slice(0, 4).join('\n') + '\n')

  const warnings: string[] = []
  const logger = { warn: (_: object, msg: string) => void warnings.push(msg), info: () => undefined }
  const journal = await Journal.open(options(media, { logger }))
  t.equal(journal.recovery.intact, false)
  t.equal(journal.recovery.sealedRecovered, false)
  t.same(journal.recovery.problems, [`${crashed.id}:seq 3: MAC does not match`])
  t.same(warnings, ['journal: the journal does not verify'])
  t.same(await media.read(crashed.id), tampered, 'nothing appended to the broken file')
  t.same(linkOf(await media.read(journal.fileId)), { prev: crashed.id, head: chainOver(crashed.id, goodPart), seq: 2 })
  await journal.close()

  const result = verifyJournal(await readSet(media), signer.publicKey)
  t.same(
    result.problems.map((p) => [p.file, p.seq, p.message.split(':')[0]]),
    [
      [crashed.id, 3, 'MAC does not match'],
      [crashed.id, 5, 'file ends with 6 unsealed record(s) and no close, rotate or recovered seal'],
      [journal.fileId, 1, `LINK covers ${crashed.id} only up to seq 2`],
    ],
  )
})

t.test('a file torn while being created is cut to nothing and its id reused', async (t) => {
  const dir = t.testdir()
  const media = new FileJournalMedia(dir)
  const first = await Journal.open(options(media))
  await first.close()
  const second = await Journal.open(options(media))
  await second.close()
  const header = Buffer.from(await media.read(second.fileId))
  const partial = header.subarray(0, header.indexOf('\n1|') + 10)
  await writeFile(join(dir, `${second.fileId}.log`), partial)

  const third = await Journal.open(options(media))
  t.equal(third.fileId, second.fileId)
  t.same(third.recovery, {
    previous: first.fileId,
    cutBytes: partial.length,
    sealedRecovered: false,
    intact: true,
    problems: [],
  })
  await third.close()
  t.same(await media.list(), [first.fileId, second.fileId])
  t.same(verifyJournal(await readSet(media), signer.publicKey).problems, [])
})

t.test('an empty newest file with nothing before it is reused', async (t) => {
  const dir = t.testdir({ '00000001.log': '' })
  const media = new FileJournalMedia(dir)
  const journal = await Journal.open(options(media))
  t.equal(journal.fileId, '00000001')
  t.same(journal.recovery, { previous: undefined, cutBytes: 0, sealedRecovered: false, intact: true, problems: [] })
  t.same(linkOf(await media.read('00000001')), { prev: null, head: null, seq: null })
  await journal.close()
  t.ok(verifyJournal(await readSet(media), signer.publicKey).ok)
})
