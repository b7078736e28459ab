// Cutting the journal's end on a stopped device (issue 22, item 3): the enclave's anchor (the last
// durable seal) shows it at the next boot, which journals the tamper and raises fls_state 0x08;
// GET /api/logger/key gives the signed head an auditor checks files against offline.
import { ed25519 } from '@noble/curves/ed25519.js'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import type { JournalAnchor } from '../hal/types.js'
import { headMessage, Journal, verifyJournal } from '../eventstore/index.js'
import { headClaim } from '../audit/index.js'
import { FLS } from '../protocol/index.js'
import { LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { chainOver, options, readSet, records, signer } from './helpers/journal-fixtures.js'
import { readJournal } from './helpers/journal.js'
import { bearer, login, owned } from './helpers/owner.js'

/** An enclave's anchor in memory, with every anchor it was moved to; `failWrites` makes every move fail. */
function memoryAnchor(failWrites = false) {
  const store = {
    anchor: undefined as JournalAnchor | undefined,
    moves: [] as JournalAnchor[],
    journalAnchor: async () => store.anchor,
    setJournalAnchor: async (anchor: JournalAnchor) => {
      if (failWrites) throw new Error('power cut')
      store.anchor = anchor
      store.moves.push(anchor)
    },
  }
  return store
}

/** Drops the last `n` lines of a journal file. */
async function cutLines(path: string, n: number): Promise<void> {
  const lines = (await readFile(path, 'utf8')).split('\n').slice(0, -1)
  await writeFile(
    path,
    lines
      .slice(0, -n)
      .map((line) => `${line}\n`)
      .join(''),
  )
}

async function closedJournal(dir: string, anchor: ReturnType<typeof memoryAnchor>): Promise<string> {
  const journal = await Journal.open(options(new FileJournalMedia(dir), { anchor, sealEvery: 3 }))
  for (let i = 0; i < 5; i++) await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0, data: { i } }])
  await journal.close()
  return journal.fileId
}

t.test('the anchor follows every durable seal, and a journal that stops short of it is not intact', async (t) => {
  const dir = t.testdir()
  const anchor = memoryAnchor()
  const id = await closedJournal(dir, anchor)
  const bytes = await readFile(join(dir, `${id}.log`))
  t.same(
    anchor.anchor,
    { file: id, seq: records(bytes).at(-1)!.seq, head: new Uint8Array(chainOver(id, bytes)) },
    'the close seal, with the chain head after its line',
  )

  await cutLines(join(dir, `${id}.log`), 2)
  const cut = await Journal.open(options(new FileJournalMedia(dir), { anchor }))
  t.equal(cut.recovery.intact, false, 'the cut end is found')
  t.match(cut.recovery.problems.at(-1), /has no record .*which the enclave saw sealed: the journal was cut at its end/)
  t.equal(cut.recovery.sealedRecovered, true, 'recovery still seals what is left')
  await cut.close()

  const next = await Journal.open(options(new FileJournalMedia(dir), { anchor }))
  t.equal(next.recovery.intact, true, 'the anchor moved on: the next boot is whole (the tamper stays journaled)')
  await next.close()
})

t.test('a deleted newest file, or a rewritten end, is not intact either', async (t) => {
  const root = t.testdir({ deleted: {}, rewritten: {} })
  const dir = join(root, 'deleted')
  const anchor = memoryAnchor()
  await closedJournal(dir, anchor)
  const newest = await closedJournal(dir, anchor)
  await rm(join(dir, `${newest}.log`))
  const deleted = await Journal.open(options(new FileJournalMedia(dir), { anchor }))
  t.equal(deleted.recovery.intact, false)
  t.match(deleted.recovery.problems.at(-1), `file ${newest} is missing, but the enclave saw it sealed`)
  await deleted.close()

  const dir2 = join(root, 'rewritten')
  const anchor2 = memoryAnchor()
  const id = await closedJournal(dir2, anchor2)
  anchor2.anchor = { ...anchor2.anchor!, head: new Uint8Array(32) }
  const rewritten = await Journal.open(options(new FileJournalMedia(dir2), { anchor: anchor2 }))
  t.equal(rewritten.recovery.intact, false)
  t.match(rewritten.recovery.problems.at(-1), `the chain head after ${id}:seq`)
  await rewritten.close()
})

t.test('an older anchor put back is found; one inside the newest file is checked against it as found', async (t) => {
  const root = t.testdir({ earlier: {}, cut: {} })
  const dir = join(root, 'earlier')
  const anchor = memoryAnchor()
  const id = await closedJournal(dir, anchor)
  const bytes = await readFile(join(dir, `${id}.log`))
  const seal = records(bytes).find((r) => r.type === LogType.SEAL)!
  anchor.anchor = anchor.moves.find((move) => move.seq === seal.seq && !move.after)
  t.ok(anchor.anchor, 'the anchor of the periodic seal before the close seal')
  const older = await Journal.open(options(new FileJournalMedia(dir), { anchor }))
  t.equal(older.recovery.intact, false, 'the files hold a seal after it: it was put back')
  t.match(older.recovery.problems.at(-1), /is a seal after the enclave's anchor at .*put back from an older state/)
  await older.close()

  // Only the close seal cut: recovery seals the file again at that very seq, which must not pass for it.
  const dir2 = join(root, 'cut')
  const anchor2 = memoryAnchor()
  const id2 = await closedJournal(dir2, anchor2)
  await cutLines(join(dir2, `${id2}.log`), 1)
  const cut = await Journal.open(options(new FileJournalMedia(dir2), { anchor: anchor2 }))
  t.equal(cut.recovery.sealedRecovered, true, "the recovered seal takes the cut seal's seq")
  t.match(cut.recovery.problems.at(-1), /has no record .*which the enclave saw sealed/, 'the cut is found')
  await cut.close()
})

t.test('sealed records without an anchor: the anchor was removed', async (t) => {
  const dir = t.testdir()
  await closedJournal(dir, memoryAnchor())
  const removed = await Journal.open(options(new FileJournalMedia(dir), { anchor: memoryAnchor() }))
  t.equal(removed.recovery.intact, false)
  t.match(
    removed.recovery.problems.at(-1),
    /is a seal, but the enclave holds no journal anchor: the anchor was removed/,
  )
  await removed.close()
})

t.test('the anchor moves to a seal before it is written and is marked durable after', async (t) => {
  const dir = t.testdir()
  const anchor = memoryAnchor()
  const id = await closedJournal(dir, anchor)
  const bytes = await readFile(join(dir, `${id}.log`))
  const seals = records(bytes).filter((r) => r.type === LogType.SEAL)
  t.same(
    anchor.moves.map((move) => [move.seq, move.after === undefined ? 'durable' : 'ahead']),
    seals.flatMap((seal) => [
      [seal.seq, 'ahead'],
      [seal.seq, 'durable'],
    ]),
    'two moves per seal, in order',
  )
  const closing = anchor.moves.at(-2)!
  t.equal(closing.after!.seq, seals.at(-1)!.seq - 1, 'ahead of the close seal: the record its batch follows')
})

t.test('a crash around a seal is no tamper: before its write, or before the anchor was marked durable', async (t) => {
  const root = t.testdir({ fresh: {}, before: {}, after: {}, beyond: {} })
  const fresh = await Journal.open(options(new FileJournalMedia(join(root, 'fresh')), { anchor: memoryAnchor() }))
  t.equal(fresh.recovery.intact, true, 'a fresh journal')
  await fresh.close()

  const crashed = async (name: string, cut: number) => {
    const dir = join(root, name)
    const anchor = memoryAnchor()
    const id = await closedJournal(dir, anchor)
    anchor.anchor = anchor.moves.at(-2)
    if (cut > 0) await cutLines(join(dir, `${id}.log`), cut)
    const journal = await Journal.open(options(new FileJournalMedia(dir), { anchor }))
    await journal.close()
    return journal.recovery
  }
  t.equal((await crashed('before', 1)).intact, true, "the close seal's write did not complete: the file ends before it")
  t.equal((await crashed('after', 0)).intact, true, 'the close seal written, the anchor still ahead of it')
  const beyond = await crashed('beyond', 2)
  t.equal(beyond.intact, false, 'a record before the seal missing too: cut')
  t.match(beyond.problems.at(-1), /has no record .*the journal was cut at its end/)

  const unreadable = {
    journalAnchor: async () => {
      throw new Error('corrupt')
    },
    setJournalAnchor: async () => undefined,
  }
  const unknown = await Journal.open(options(new FileJournalMedia(join(root, 'after')), { anchor: unreadable }))
  t.equal(unknown.recovery.intact, false, 'an anchor that cannot be read vouches for nothing')
  t.match(unknown.recovery.problems.at(-1), /cannot be used \(corrupt\)/)
  await unknown.close()
})

t.test('an enclave that refuses the anchor: no seal is written, the write fails', async (t) => {
  const dir = t.testdir()
  const stuck = memoryAnchor(true)
  const journal = await Journal.open(options(new FileJournalMedia(dir), { anchor: stuck, sealEvery: 4 }))
  await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }])
  await t.rejects(journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }]), { name: 'JournalWriteError' })
  await t.rejects(journal.close(), { name: 'JournalWriteError' })
  const bytes = await readFile(join(dir, `${journal.fileId}.log`))
  t.equal(records(bytes).filter((r) => r.type === LogType.SEAL).length, 0, 'the file holds no seal')
})

t.test('the signed head: the newest durable record, signed with the log key', async (t) => {
  const dir = t.testdir()
  const media = new FileJournalMedia(dir)
  const journal = await Journal.open(options(media, { anchor: memoryAnchor() }))
  const [at] = await journal.append([{ type: LogType.KEY_USAGE_PKEY, result: 0 }])
  const head = journal.signedHead()
  t.match(head, { file: at!.file, seq: at!.seq })
  const bytes = await media.read(head.file)
  t.same(Buffer.from(head.head, 'base64'), chainOver(head.file, bytes), 'the chain head after its line')
  const message = headMessage(head.file, head.seq, new Uint8Array(Buffer.from(head.head, 'base64')))
  t.ok(ed25519.verify(Buffer.from(head.sig, 'base64'), message, signer.publicKey))
  const files = await readSet(media)
  t.same(verifyJournal(files, signer.publicKey, { allowOpenTail: true, heads: [headClaim(head)] }).problems, [])
  await journal.close()
})

const flsOf = async (base: string): Promise<number> => (await call(`${base}/api/system/status`)).json.fls_state

async function tamperRecords(dataDir: string) {
  const { records: all } = await readJournal(dataDir)
  return all.filter((r) => r.type === LogType.NON_SECURE_STATE && r.decoded?.source === 'journal')
}

t.test('over HTTP: a device whose journal end was cut boots with fls_state 0x08 and journals it', async (t) => {
  // Emptied first: a second run must not find the first one's devices.
  const root = t.testdir()
  for (const [what, tamper] of [
    ['the last lines of the newest file cut, its seals included', (path: string) => cutLines(path, 3)],
    ['the newest file deleted', (path: string) => rm(path)],
  ] as const) {
    const dataDir = join(root, what.split(' ')[1]!)
    await (await bootDevice(t, { dataDir, variant: 'E' })).stop()
    const second = await bootDevice(t, { dataDir, variant: 'E' })
    t.equal(await flsOf(second.httpUrl!), 0, `${what}: a whole journal boots secure`)
    await second.stop()
    const { files } = await readJournal(dataDir)
    await tamper(join(dataDir, 'journal', `${files.at(-1)!.id}.log`))

    const third = await bootDevice(t, { dataDir, variant: 'E' })
    t.equal((await flsOf(third.httpUrl!)) & FLS.INTEGRITY, FLS.INTEGRITY, `${what}: fls_state has 0x08`)
    await third.stop()
    t.match(await tamperRecords(dataDir), [{ result: 2, decoded: { raised: FLS.INTEGRITY, source: 'journal' } }])

    const fourth = await bootDevice(t, { dataDir, variant: 'E' })
    t.equal(await flsOf(fourth.httpUrl!), 0, `${what}: the next boot is secure again, the tamper record stays`)
    await fourth.stop()
    t.equal((await tamperRecords(dataDir)).length, 1)
  }
})

t.test('GET /api/logger/key gives the signed head beside the key and nonce', async (t) => {
  const o = await owned(t)
  const token = await login(o.base, 'logger:get')
  const answer = await call(`${o.base}/api/logger/key`, { headers: bearer(token) })
  t.equal(answer.status, 200)
  const { key, nonce, nonce_signed, head } = answer.json
  t.ok(key && nonce && nonce_signed, 'the contract fields stay')
  t.match(head, { file: /^[0-9a-f]{8}$/, seq: Number, head: String, sig: String })
  const message = headMessage(head.file, head.seq, new Uint8Array(Buffer.from(head.head, 'base64')))
  t.ok(ed25519.verify(Buffer.from(head.sig, 'base64'), message, Buffer.from(key, 'base64')), 'signed by the log key')
  const { files } = await readJournal(o.device.dataDir)
  const checked = verifyJournal(files, Buffer.from(key, 'base64'), {
    allowOpenTail: true,
    trustOpenTail: true,
    heads: [headClaim(answer.json)],
  })
  t.same(checked.problems, [], 'the files reach its record with its chain head')
})
