// The boot checks the newest journal file twice (recovery, then the identity's history): the
// second check is the first one's result, and only ever for the very same bytes.
import t from 'tap'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { checkSegmentOnce } from '../eventstore/checked-segments.js'
import { Journal } from '../eventstore/index.js'
import { LogType } from '../protocol/journal.js'
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
  t.equal(
    checkSegmentOnce(file!.id, new Uint8Array(file!.bytes), signer.publicKey),
    first,
    'a copy of the same bytes: the remembered check',
  )

  const tampered = Buffer.from(file!.bytes).toString('utf8').replace('|U|', '|V|')
  const changed = checkSegmentOnce(file!.id, new Uint8Array(Buffer.from(tampered)), signer.publicKey)
  t.not(changed, first, 'changed bytes are checked afresh')
  t.match(
    changed.problems.map((p) => p.message),
    [/MAC does not match/],
    'and the change is found',
  )

  const otherId = checkSegmentOnce('00000001', file!.bytes, signer.publicKey)
  t.not(otherId, first, 'the same bytes under another id are checked afresh (the chain starts from the id)')
  t.ok(otherId.problems.length > 0, 'and do not verify there')
})

t.test('prefetched checks land in the memo, from a worker thread of the build', async (t) => {
  // The worker runs compiled code: the build's copy of the module starts it.
  const built = (await import(
    `${distDir}/eventstore/checked-segments.js`
  )) as typeof import('../eventstore/checked-segments.js')
  const big = new Uint8Array(Buffer.from(`# banner\n${'not a record\n'.repeat(100_000)}`))
  const shared = new Uint8Array(64)
  const files = [
    { id: '00000001', bytes: big },
    { id: '00000002', bytes: new Uint8Array(16) },
    // A view of a buffer it shares cannot move: it is copied to the worker.
    { id: '00000005', bytes: shared.subarray(8, 24) },
  ]
  const copies = files.map((file) => ({ id: file.id, bytes: new Uint8Array(file.bytes) }))
  built.prefetchChecks(files, signer.publicKey)
  t.same(
    files.map((file) => file.bytes.length),
    [0, 0, 16],
    'the bytes that own their buffer moved to the worker, not copied',
  )
  await built.prefetchedChecks()
  for (const file of copies) t.ok(built.isChecked(file.id, file.bytes, signer.publicKey), `${file.id} is remembered`)
  t.match(
    built.checkSegmentOnce(copies[0]!.id, copies[0]!.bytes, signer.publicKey).problems[0],
    { line: 2 },
    'with its problems found',
  )
  t.notOk(built.isChecked('00000003', copies[1]!.bytes, signer.publicKey), 'nothing else is')
})

t.test('a journal prefetches the older files only when asked to (its process reads the history next)', async (t) => {
  const built = (await import(`${distDir}/eventstore/index.js`)) as typeof import('../eventstore/index.js')
  const { isChecked, prefetchedChecks } = (await import(
    `${distDir}/eventstore/checked-segments.js`
  )) as typeof import('../eventstore/checked-segments.js')
  const media = new FileJournalMedia(t.testdir())
  // Over a MiB in older files: a set worth a worker.
  const journal = await built.Journal.open(options(media, { clock: fixedClock(), rotateBytes: 256 * 1024 }))
  const entry = {
    type: LogType.CRYPTO_ENCRYPT,
    result: 0 as const,
    subject: 'U',
    data: { source: 200, kid: 'k'.repeat(32) },
  }
  for (let i = 0; i < 60; i++) await journal.append(Array.from({ length: 200 }, () => entry))
  await journal.close()
  const older = (await readSet(media)).slice(0, -1)
  t.ok(older.reduce((sum, file) => sum + file.bytes.length, 0) > 1024 * 1024, 'older files of over a MiB')
  const checked = () => older.filter((file) => isChecked(file.id, file.bytes, signer.publicKey)).length

  await (await built.Journal.open(options(media, { clock: fixedClock() }))).close()
  await prefetchedChecks()
  t.equal(checked(), 0, 'by default (the eventstore of --split): none is checked ahead')
  await (await built.Journal.open(options(media, { clock: fixedClock(), prefetchChecks: true }))).close()
  await prefetchedChecks()
  t.equal(checked(), older.length, 'asked to: every older file is checked ahead')
})

t.test('a small set is not worth a worker: it is checked when asked for', async (t) => {
  const small = [{ id: '00000004', bytes: new Uint8Array(Buffer.from('# banner\n')) }]
  const { prefetchChecks, prefetchedChecks, isChecked } = await import('../eventstore/checked-segments.js')
  prefetchChecks(small, signer.publicKey)
  await prefetchedChecks()
  t.notOk(isChecked(small[0]!.id, small[0]!.bytes, signer.publicKey))
})

t.test('a worker started ahead takes the next files; one ended unused leaves the next prefetch its own', async (t) => {
  const built = (await import(
    `${distDir}/eventstore/checked-segments.js`
  )) as typeof import('../eventstore/checked-segments.js')
  const file = (id: string) => ({
    id,
    bytes: new Uint8Array(Buffer.from(`# banner\n${'no record\n'.repeat(120_000)}`)),
  })
  const ahead = file('00000011')
  const copy = new Uint8Array(ahead.bytes)
  built.warmUpChecks()
  built.prefetchChecks([ahead], signer.publicKey)
  await built.prefetchedChecks()
  t.ok(built.isChecked(ahead.id, copy, signer.publicKey), 'checked by the worker started ahead')

  built.warmUpChecks()
  built.coolDownChecks()
  const after = file('00000012')
  const afterCopy = new Uint8Array(after.bytes)
  built.prefetchChecks([after], signer.publicKey)
  await built.prefetchedChecks()
  t.ok(built.isChecked(after.id, afterCopy, signer.publicKey), 'a worker of its own, not the ended one')
})
