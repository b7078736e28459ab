// The boot checks the newest journal file twice (recovery, then the identity's history): the
// second check is the first one's result, and only ever for the very same bytes.
import t from 'tap'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { checkSegmentOnce } from '../eventstore/checked-segments.js'
import { Journal, LogType } from '../eventstore/index.js'
import { distDir } from './helpers/device.js'
import { fixedClock, options, readSet, signer } from './helpers/journal-fixtures.js'

t.test('the same key, id and bytes get the same check; changed bytes get a check of their own', async (t) => {
  const media = new FileJournalMedia(t.testdir())
  const journal = await Journal.open(options(media, { clock: fixedClock() }))
  await journal.append([{ type: LogType.CRYPTO_ENCRYPT, result: 0, subject: 'U', data: { source: 200, kid: 'k' } }])
  await journal.close()
  const [file] = await readSet(media)
  const first = checkSegmentOnce(file!.id, file!.bytes, signer.publicKey)
  t.same(first.problems, [], 'the file verifies')
  t.equal(checkSegmentOnce(file!.id, new Uint8Array(file!.bytes), signer.publicKey), first, 'a copy of the same bytes: the remembered check')

  const tampered = Buffer.from(file!.bytes).toString('utf8').replace('|U|', '|V|')
  const changed = checkSegmentOnce(file!.id, new Uint8Array(Buffer.from(tampered)), signer.publicKey)
  t.not(changed, first, 'changed bytes are checked afresh')
  t.match(changed.problems.map((p) => p.message), [/MAC does not match/], 'and the change is found')

  const otherId = checkSegmentOnce('00000001', file!.bytes, signer.publicKey)
  t.not(otherId, first, 'the same bytes under another id are checked afresh (the chain starts from the id)')
  t.ok(otherId.problems.length > 0, 'and do not verify there')
})

t.test('prefetched checks land in the memo, from a worker thread of the build', async (t) => {
  // The worker runs compiled code: the build's copy of the module starts it.
  const built = (await import(`${distDir}/eventstore/checked-segments.js`)) as typeof import('../eventstore/checked-segments.js')
  const files = [
    { id: '00000001', bytes: new Uint8Array(Buffer.from(`# banner\n${'not a record\n'.repeat(100_000)}`)) },
    { id: '00000002', bytes: new Uint8Array(16) },
  ]
  built.prefetchChecks(files, signer.publicKey)
  await built.prefetchedChecks()
  for (const file of files) t.ok(built.isChecked(file.id, file.bytes, signer.publicKey), `${file.id} is remembered`)
  t.match(built.checkSegmentOnce(files[0]!.id, files[0]!.bytes, signer.publicKey).problems[0], { line: 2 }, 'with its problems found')
  t.notOk(built.isChecked('00000003', files[1]!.bytes, signer.publicKey), 'nothing else is')
})

t.test('a small set is not worth a worker: it is checked when asked for', async (t) => {
  const small = [{ id: '00000004', bytes: new Uint8Array(Buffer.from('# banner\n')) }]
  const { prefetchChecks, prefetchedChecks, isChecked } = await import('../eventstore/checked-segments.js')
  prefetchChecks(small, signer.publicKey)
  await prefetchedChecks()
  t.notOk(isChecked(small[0]!.id, small[0]!.bytes, signer.publicKey))
})
