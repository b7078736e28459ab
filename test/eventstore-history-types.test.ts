// A boot folds the identity from three types of record out of a long journal: the history reads
// only those (readRecordLines passes every other line over by its type field), and the fold
// comes out the same as from every record.
import t from 'tap'
import { readHistory, readLines } from '../eventstore/index.js'
import { readRecordLines } from '../eventstore/read-lines.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { foldIdentity, IDENTITY_RECORD_TYPES } from '../machines/identity-fold.js'
import { LogType } from '../protocol/journal.js'
import { readSet, signer, writeDeviceJournal } from './helpers/journal-fixtures.js'

t.test('readRecordLines gives exactly the record lines of the types asked for, as readLines does', async (t) => {
  const dir = t.testdir()
  await writeDeviceJournal(dir)
  const files = await readSet(new FileJournalMedia(dir))
  const seen = new Set<number>()
  for (const { bytes } of files)
    for (const line of readLines(bytes)) if (line.kind === 'record') seen.add(line.record.type)
  t.ok(seen.size > 5, `the journal holds ${seen.size} types of record`)
  for (const types of [IDENTITY_RECORD_TYPES, new Set([LogType.KEY_GENERATION]), new Set(seen), new Set<number>()]) {
    for (const { id, bytes } of files) {
      const all = [...readLines(bytes)].filter((line) => line.kind === 'record' && types.has(line.record.type))
      t.strictSame([...readRecordLines(bytes, types)], all, `${id}, types ${[...types].join(',') || 'none'}`)
    }
  }
})

t.test('a line without a readable type field is left out, never misread', async (t) => {
  const lines = ['# banner', '0|6553f100|1g|0||x|m', '1|6553f100', '2|6553f100||0||x|m', '3|6553f100|13']
  const bytes = new TextEncoder().encode(`${lines.join('\n')}\n`)
  t.strictSame([...readRecordLines(bytes, new Set([0x13, 0x1]))], [])
})

t.test('the identity folded from the history of its types is the one folded from every record', async (t) => {
  const dir = t.testdir()
  await writeDeviceJournal(dir, true)
  const media = new FileJournalMedia(dir)
  const every = await readHistory(media, signer.publicKey)
  const selected = await readHistory(media, signer.publicKey, IDENTITY_RECORD_TYPES)
  t.equal(selected.intact, true)
  const count = (records: Iterable<unknown>) => [...records].length
  t.ok(count(selected.records) < count(every.records), 'fewer records read')
  const a = foldIdentity(every.records, 'P')
  const b = foldIdentity(selected.records, 'P')
  t.strictSame(b.config, a.config, 'the same configuration')
  t.equal(
    JSON.stringify(b.personalisation.value),
    JSON.stringify(a.personalisation.value),
    'the same personalisation state',
  )
  t.equal(JSON.stringify(b.provisioning.value), JSON.stringify(a.provisioning.value), 'the same provisioning state')
  t.not(a.personalisation.value, 'fresh', 'and the journal does personalise the device')
})
