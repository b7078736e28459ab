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

/** An enclave's anchor in memory; `failWrites` makes every move fail, as a crash right after the seal would. */
function memoryAnchor(failWrites = false) {
  const store = {
    anchor: undefined as JournalAnchor | undefined,
    journalAnchor: async () => store.anchor,
    setJournalAnchor: async (anchor: JournalAnchor) => {
      if (failWrites) throw new Error('power cut')
      store.anchor = anchor
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

t.test('an anchor inside the newest file is checked against that file as recovery found it', async (t) => {
  const root = t.testdir({ earlier: {}, cut: {} })
  const dir = join(root, 'earlier')
  const anchor = memoryAnchor()
  const id = await closedJournal(dir, anchor)
  const bytes = await readFile(join(dir, `${id}.log`))
  const lines = bytes.toString('utf8').split('\n').slice(0, -1)
  const seal = records(bytes).find((r) => r.type === LogType.SEAL)!
  const through = lines.findIndex((line) => line.startsWith(`${seal.seq.toString(16)}|`)) + 1
  const upTo = Buffer.from(
    lines
      .slice(0, through)
      .map((line) => `${line}\n`)
      .join(''),
  )
  anchor.anchor = { file: id, seq: seal.seq, head: new Uint8Array(chainOver(id, upTo)) }
  const whole = await Journal.open(options(new FileJournalMedia(dir), { anchor }))
  t.equal(whole.recovery.intact, true, 'an anchor at a periodic seal before the close seal: the file is longer')
  await whole.close()

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

t.test('no anchor yet, or one left behind by a crash before it moved, is no tamper', async (t) => {
  const dir = t.testdir()
  const fresh = memoryAnchor()
  const journal = await Journal.open(options(new FileJournalMedia(dir), { anchor: fresh }))
  t.equal(journal.recovery.intact, true, 'a fresh journal')
  await journal.close()

  const behind = memoryAnchor()
  await closedJournal(dir, behind)
  const stuck = memoryAnchor(true)
  stuck.anchor = behind.anchor
  await closedJournal(dir, stuck)
  const longer = await Journal.open(options(new FileJournalMedia(dir), { anchor: stuck }))
  t.equal(longer.recovery.intact, true, 'a journal longer than its anchor is whole')
  await longer.close()

  const unreadable = {
    journalAnchor: async () => {
      throw new Error('corrupt')
    },
    setJournalAnchor: async () => undefined,
  }
  const unknown = await Journal.open(options(new FileJournalMedia(dir), { anchor: unreadable }))
  t.equal(unknown.recovery.intact, false, 'an anchor that cannot be read vouches for nothing')
  await unknown.close()
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
