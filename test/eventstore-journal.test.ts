import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import type { AppendHandle, JournalMedia } from '../hal/types.js'
import {
  Journal,
  JournalClosedError,
  JournalWriteError,
  decodeRecordData,
  parseSealData,
  verifyJournal,
  type JournalOptions,
} from '../eventstore/index.js'
import { LogType } from '../protocol/journal.js'
import { verifyClientStyle } from '../audit/index.js'
import { DelegatingJournalMedia, overrideHandle } from './helpers/delegating-media.js'
import { until } from './helpers/until.js'
import {
  START,
  chainOver,
  fixedClock,
  options as journalOptions,
  readSet,
  records,
  signer,
} from './helpers/journal-fixtures.js'

const BANNER = '# hemd 0.1.0 journal {id} devid 0011223344556677 variant P'

function options(media: JournalMedia, extra: Partial<JournalOptions> = {}): JournalOptions {
  return journalOptions(media, extra, BANNER)
}

function seals(bytes: Uint8Array): string[] {
  return records(bytes)
    .filter((r) => r.type === LogType.SEAL)
    .map((r) => parseSealData(decodeRecordData(r))?.reason ?? 'bad')
}

/** Counts durable appends and can fail the next ones, after really writing (fsync failed) or before. */
class WatchedMedia extends DelegatingJournalMedia {
  appends = 0
  failNext: 'before' | 'after' | undefined
  failTruncate = false
  failOpen = false
  override async open(id: string): Promise<AppendHandle> {
    if (this.failOpen) throw new Error('EIO open')
    const handle = await this.inner.open(id)
    return overrideHandle(handle, {
      append: async (data) => {
        const fail = this.failNext
        this.failNext = undefined
        if (fail === 'before') throw new Error('EIO before')
        await handle.append(data)
        if (fail === 'after') throw new Error('EIO after')
        this.appends++
      },
      truncate: async (length) => {
        if (this.failTruncate) throw new Error('EIO truncate')
        await handle.truncate(length)
      },
    })
  }
}

t.test('append, seal and close round trip', async (t) => {
  const dir = t.testdir()
  const media = new FileJournalMedia(dir)
  const clock = fixedClock()
  const journal = await Journal.open(options(media, { clock }))
  const id = journal.fileId
  t.equal(id, Math.floor(START / 1000).toString(16))
  t.same(journal.recovery, { previous: undefined, cutBytes: 0, sealedRecovered: false, intact: true, problems: [] })
  t.same(journal.publicKey, signer.publicKey)

  const transition = { machine: 'disk', version: 1, from: 'locked', to: 'rw', event: 'UNLOCK' }
  const positions = await journal.append([
    { type: LogType.AUTH_SUCCESS_INTERNAL, result: 0, subject: 'U', data: { source: 200, rid: 'r1' } },
    { type: LogType.TRANSITION, result: 0, data: transition },
  ])
  t.same(positions, [
    { file: id, seq: 2 },
    { file: id, seq: 3 },
  ])
  const bytes = await media.read(id)
  t.same(journal.head, chainOver(id, bytes), 'head is the chain over the stored bytes')
  clock.advance(5000)
  await journal.close()

  const text = (await readFile(join(dir, `${id}.log`), 'utf8')).split('\n')
  t.equal(text[0], `# hemd 0.1.0 journal ${id} devid 0011223344556677 variant P`)
  t.match(text[1], new RegExp(`^0\\|${id}\\|0\\|0\\|[A-Za-z0-9_-]{43}\\|[A-Za-z0-9_-]{86}\\|[A-Za-z0-9_-]{22}$`))
  t.match(text[3], new RegExp(`^2\\|${id}\\|d\\|0\\|U\\|[A-Za-z0-9_-]+\\|[A-Za-z0-9_-]{22}$`))
  t.equal(text.at(-1), '', 'ends with a newline')

  const all = records(await media.read(id))
  t.same(
    all.map((r) => r.seq),
    [0, 1, 2, 3, 4],
  )
  t.same(decodeRecordData(all[1]!), { prev: null, head: null, seq: null })
  t.same(decodeRecordData(all[2]!), { source: 200, rid: 'r1' })
  t.same(decodeRecordData(all[3]!), transition)
  t.equal(all[4]!.time, Math.floor(START / 1000) + 5)
  const seal = parseSealData(decodeRecordData(all[4]!))
  const full = await media.read(id)
  const beforeSeal = full.subarray(0, full.lastIndexOf(10, full.length - 2) + 1)
  t.same(seal?.head, chainOver(id, beforeSeal), 'the seal commits to the chain over every line before it')
  t.equal(seal?.reason, 'close')

  const files = await readSet(media)
  t.same(verifyJournal(files, signer.publicKey), {
    ok: true,
    problems: [],
    summary: {
      files: 1,
      records: 5,
      seals: 1,
      firstTime: Math.floor(START / 1000),
      lastTime: Math.floor(START / 1000) + 5,
    },
  })
  t.same(verifyClientStyle(full, signer.publicKey), { ok: true, problems: [] })
})

t.test('group commit: concurrent appends share one durable append', async (t) => {
  const media = new WatchedMedia(new FileJournalMedia(t.testdir()))
  const journal = await Journal.open(options(media))
  t.equal(media.appends, 1, 'banner, KEY_INIT and LINK in one append')
  const calls = Array.from({ length: 100 }, (_, i) =>
    journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0, data: { i } }]),
  )
  const positions = await Promise.all(calls)
  t.same(
    positions.map((p) => p[0]?.seq),
    Array.from({ length: 100 }, (_, i) => i + 2),
    'seq in call order',
  )
  t.ok(media.appends - 1 <= 2, `100 appends took ${media.appends - 1} writes`)
  await journal.close()
  t.ok(verifyJournal(await readSet(media), signer.publicKey).ok)
})

t.test('periodic seal after sealEvery records, in the same batch', async (t) => {
  const media = new WatchedMedia(new FileJournalMedia(t.testdir()))
  const journal = await Journal.open(options(media, { sealEvery: 5 }))
  for (let i = 0; i < 10; i++) await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }])
  t.equal(media.appends, 11, 'seals add no writes')
  await journal.close()
  const bytes = await media.read(journal.fileId)
  t.same(seals(bytes), ['periodic', 'periodic', 'close'])
  const all = records(bytes)
  t.same(
    all.filter((r) => r.type === LogType.SEAL).map((r) => r.seq),
    [5, 11, 14],
    'KEY_INIT and LINK count toward the first seal',
  )
  t.ok(verifyJournal(await readSet(media), signer.publicKey).ok)
})

t.test('periodic seal by timer when something is unsealed', async (t) => {
  const media = new FileJournalMedia(t.testdir())
  const clock = fixedClock()
  const journal = await Journal.open(options(media, { clock, sealIntervalMs: 15_000 }))
  t.same(clock.armed(), [15_000], 'on the clock given, every sealIntervalMs')
  await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }])
  clock.advance(15_000)
  await until('the timer sealed the appended record', async () => {
    return records(await media.read(journal.fileId)).at(-1)?.type === LogType.SEAL
  })
  const sealed = await media.read(journal.fileId)
  clock.advance(45_000)
  t.same(await media.read(journal.fileId), sealed, 'no more seals while nothing is unsealed')
  await journal.close()
  t.same(clock.armed(), [], 'the close stops the timer')
  t.same(seals(await media.read(journal.fileId)), ['periodic', 'close'])
  t.ok(verifyJournal(await readSet(media), signer.publicKey).ok)
})

t.test('rotation by size links the files', async (t) => {
  const media = new FileJournalMedia(t.testdir())
  const journal = await Journal.open(options(media, { rotateBytes: 2000 }))
  const first = journal.fileId
  const files = new Set<string>()
  for (let i = 0; i < 30; i++) {
    const [position] = await journal.append([
      { type: LogType.CRYPTO_ENCRYPT, result: 0, data: { kid: 'ab'.repeat(16), pad: 'x'.repeat(100) } },
    ])
    files.add(position!.file)
  }
  await journal.close()
  const ids = await media.list()
  t.ok(ids.length >= 3, `${ids.length} files`)
  t.same([...files], ids, 'positions name the file each entry landed in')
  t.equal(ids[1], (parseInt(first, 16) + 1).toString(16), 'ids increase within one second')
  for (const id of ids.slice(0, -1)) t.equal(seals(await media.read(id)).at(-1), 'rotate')
  t.equal(seals(await media.read(ids.at(-1)!)).at(-1), 'close')
  const second = records(await media.read(ids[1]!))
  const link = decodeRecordData(second[1]!)
  const firstBytes = await media.read(first)
  t.same(link, { prev: first, head: Buffer.from(chainOver(first, firstBytes)), seq: records(firstBytes).at(-1)!.seq })
  t.same(verifyJournal(await readSet(media), signer.publicKey).problems, [])
})

t.test('close is idempotent and later appends are refused', async (t) => {
  const media = new FileJournalMedia(t.testdir())
  const journal = await Journal.open(options(media))
  const pending = journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }])
  const closing = journal.close()
  t.equal(journal.close(), closing)
  await closing
  t.same(await pending, [{ file: journal.fileId, seq: 2 }], 'pending appends are written before the close seal')
  await t.rejects(journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }]), JournalClosedError)
  t.same(seals(await media.read(journal.fileId)), ['close'])
})

t.test('a failed write rejects its batch and later appends still verify', async (t) => {
  for (const when of ['before', 'after'] as const) {
    const media = new WatchedMedia(new FileJournalMedia(t.testdir()))
    const journal = await Journal.open(options(media))
    await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0, data: { n: 1 } }])
    const size = (await media.read(journal.fileId)).length
    const head = journal.head
    media.failNext = when
    const failed = journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0, data: { n: 2 } }])
    await t.rejects(failed, { name: 'JournalWriteError', cause: { message: `EIO ${when}` } })
    await failed.catch((err: unknown) => t.type(err, JournalWriteError))
    t.equal((await media.read(journal.fileId)).length, size, `cut back after a failure ${when} writing`)
    t.same(journal.head, head, 'chain rolled back')
    t.same(await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0, data: { n: 3 } }]), [
      { file: journal.fileId, seq: 3 },
    ])
    await journal.close()
    const data = records(await media.read(journal.fileId))
      .filter((r) => r.type === LogType.KEY_USAGE_PKEY)
      .map((r) => decodeRecordData(r))
    t.same(data, [{ n: 1 }, { n: 3 }])
    t.same(verifyJournal(await readSet(media), signer.publicKey).problems, [])
  }
})

t.test('a failed write that cannot be cut back stops every append until the cut works', async (t) => {
  const media = new WatchedMedia(new FileJournalMedia(t.testdir()))
  const warnings: string[] = []
  const logger = { warn: (_: object, msg: string) => void warnings.push(msg), info: () => undefined }
  const journal = await Journal.open(options(media, { logger }))
  const file = journal.fileId
  await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }])
  media.failNext = 'after'
  media.failTruncate = true
  await t.rejects(journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }]), JournalWriteError)
  const torn = (await media.read(file)).length
  await t.rejects(journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }]), {
    name: 'JournalWriteError',
    cause: { message: 'EIO truncate' },
  })
  t.equal((await media.read(file)).length, torn, 'nothing is written after the stray record')
  media.failTruncate = false
  t.same(
    await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }]),
    [{ file, seq: 3 }],
    'cut back, then the same file goes on',
  )
  t.same(warnings, Array(2).fill('journal: write failed and could not be cut back; appends are refused until it can'))
  await journal.close()
  t.same(verifyJournal(await readSet(media), signer.publicKey).problems, [], 'no stray record, no second file')
})

t.test('a failed rotation is retried with the next write', async (t) => {
  const media = new WatchedMedia(new FileJournalMedia(t.testdir()))
  const warnings: string[] = []
  const logger = { warn: (_: object, msg: string) => void warnings.push(msg), info: () => undefined }
  const journal = await Journal.open(options(media, { logger, rotateBytes: 400 }))
  const first = journal.fileId
  media.failOpen = true
  const entry = { type: LogType.KEY_USAGE_PKEY, result: 0 as const, data: { pad: 'x'.repeat(200) } }
  t.same(await journal.append([entry]), [{ file: first, seq: 2 }], 'the batch that filled the file is durable')
  await t.rejects(journal.append([entry]), { name: 'JournalWriteError', cause: { message: 'EIO open' } })
  t.same(warnings, ['journal: rotation failed; retrying with the next write', 'journal: write failed'])
  media.failOpen = false
  const [position] = await journal.append([entry])
  t.not(position!.file, first)
  await journal.close()
  t.same(verifyJournal(await readSet(media), signer.publicKey).problems, [])
})

t.test('a signer failure rejects the batch and writes nothing', async (t) => {
  const media = new FileJournalMedia(t.testdir())
  let failSign = false
  const flaky = {
    publicKey: signer.publicKey,
    sign: (m: Uint8Array) => {
      if (failSign) throw new Error('enclave busy')
      return signer.sign(m)
    },
  }
  const journal = await Journal.open(options(media, { signer: flaky, sealEvery: 3 }))
  const size = (await media.read(journal.fileId)).length
  failSign = true
  await t.rejects(journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }]), {
    name: 'JournalWriteError',
    cause: { message: 'enclave busy' },
  })
  t.equal((await media.read(journal.fileId)).length, size)
  failSign = false
  t.same(await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }]), [{ file: journal.fileId, seq: 2 }])
  await journal.close()
  t.same(seals(await media.read(journal.fileId)), ['periodic', 'close'])
  t.same(verifyJournal(await readSet(media), signer.publicKey).problems, [])
})

t.test('entries are validated before anything is written', async (t) => {
  const media = new FileJournalMedia(t.testdir())
  const journal = await Journal.open(options(media))
  const size = (await media.read(journal.fileId)).length
  const bad = [
    { type: -1, result: 0 },
    { type: 0x10000, result: 0 },
    { type: 1.5, result: 0 },
    { type: LogType.KEY_INIT, result: 0 },
    { type: LogType.LINK, result: 0 },
    { type: LogType.SEAL, result: 0 },
    { type: 1, result: 3 },
    { type: 1, result: 0, subject: 'a|b' },
    { type: 1, result: 0, subject: 'a\nb' },
    { type: 1, result: 0, subject: 'a\rb' },
    { type: 1, result: 0, subject: 'x'.repeat(129) },
    { type: 1, result: 0, data: [1, 2] },
    { type: 1, result: 0, data: { blob: 'x'.repeat(20_000) } },
  ]
  for (const entry of bad) {
    await t.rejects(
      journal.append([{ type: 1, result: 0 }, entry as never]),
      TypeError,
      JSON.stringify(entry).slice(0, 60),
    )
  }
  t.equal((await media.read(journal.fileId)).length, size, 'nothing written')
  t.same(await journal.append([]), [])
  t.same(await journal.append([{ type: LogType.TRANSITION, result: 0, subject: 'ext-1' }]), [
    { file: journal.fileId, seq: 2 },
  ])
  await journal.close()
  t.ok(verifyJournal(await readSet(media), signer.publicKey).ok)
})

t.test('options are checked', async (t) => {
  const media = new FileJournalMedia(t.testdir())
  await t.rejects(Journal.open(options(media, { banner: 'no hash' })), TypeError)
  await t.rejects(Journal.open(options(media, { banner: '# two\nlines' })), TypeError)
  await t.rejects(Journal.open(options(media, { sealEvery: 0 })), TypeError)
  t.same(await media.list(), [])
})
