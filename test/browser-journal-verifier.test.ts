// The management app's journal verifier (@noble's primitives, webroot/audit/) against hem-audit
// verify (node:crypto): the same verdict, the same problems at the same file and line, on a
// device's journal as the writer leaves it and on every kind of tampering.
import { ed25519 } from '@noble/curves/ed25519.js'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { headClaim } from '../audit/index.js'
import { main } from '../cli/hem-audit/audit-cli.js'
import { decodeRecordData, fromBase64Url, lineMac, readLines } from '../eventstore/index.js'
import { packData } from '../eventstore/pack-data.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import type { JournalFile, RecordLine, SignedHead, VerifyProblem } from '../protocol/journal.js'
import { verifyJournalFiles } from '../webroot/audit/verify-journal-files.js'
import { runCli } from './helpers/cli-output.js'
import { readSet, signedHeadOf, signer, writeDeviceJournal } from './helpers/journal-fixtures.js'

/** Three boots, the second rotating into a file per append, the third still open (a running device's). */
async function deviceJournal(dir: string) {
  const { boots } = await writeDeviceJournal(dir, true)
  const media = new FileJournalMedia(dir)
  return { boots, files: await readSet(media), head: await signedHeadOf(media) }
}

const journal = deviceJournal(t.testdir())

/** hem-audit verify --json on `files` written to `dir`. */
async function auditCli(dir: string, files: JournalFile[], key: Uint8Array, head: SignedHead) {
  await mkdir(dir, { recursive: true })
  for (const file of files) await writeFile(join(dir, `${file.id}.log`), file.bytes)
  await writeFile(join(dir, 'key.raw'), key)
  await writeFile(join(dir, 'head.json'), JSON.stringify(head))
  const args = [
    'verify',
    '--json',
    '--allow-open',
    '--key-file',
    join(dir, 'key.raw'),
    '--head',
    join(dir, 'head.json'),
  ]
  const { stdout } = await runCli(main, [...args, ...files.map((f) => join(dir, `${f.id}.log`))])
  const json = JSON.parse(stdout) as { ok: boolean; problems: (VerifyProblem & { path?: string })[] }
  return { ok: json.ok, problems: json.problems.map(({ path: _path, ...problem }) => problem) }
}

/** Both verifiers on `files`: they must agree on everything; returns their common verdict. */
async function both(t: Test, files: JournalFile[], key: Uint8Array = signer.publicKey) {
  const { head } = await journal
  const dir = t.testdir()
  // The problems name the signed head by where it came from: the same file for both.
  const claim = headClaim(head, `the signed head of ${join(dir, 'head.json')}`)
  const browser = await verifyJournalFiles(files, key, { allowOpenTail: true, heads: [claim] })
  const cli = await auditCli(dir, files, key, head)
  t.same(browser.problems, cli.problems, 'the same problems, at the same files and lines')
  t.equal(browser.ok, cli.ok)
  return browser
}

/** The line number of record `seq` in `file`. */
function lineOf(file: JournalFile, seq: number): number {
  for (const line of readLines(file.bytes)) if (line.kind === 'record' && line.record.seq === seq) return line.line
  throw new Error(`no record ${seq} in ${file.id}`)
}

function recordOf(file: JournalFile, seq: number): RecordLine {
  for (const line of readLines(file.bytes)) if (line.kind === 'record' && line.record.seq === seq) return line.record
  throw new Error(`no record ${seq} in ${file.id}`)
}

/** `files` with file `id` given new bytes. */
function replaced(files: JournalFile[], id: string, bytes: Uint8Array): JournalFile[] {
  return files.map((file) => (file.id === id ? { id, bytes } : file))
}

/** The file's text with record `seq`'s line replaced by `text` (newline added). */
function withLine(file: JournalFile, seq: number, text: string): Uint8Array {
  const lines = new TextDecoder().decode(file.bytes).split('\n')
  lines[lineOf(file, seq) - 1] = text
  return new TextEncoder().encode(lines.join('\n'))
}

/** Record `seq` rewritten as anyone holding the file could: fields changed, MAC valid again (K is in the file). */
function rewritten(file: JournalFile, seq: number, change: Partial<Pick<RecordLine, 'result' | 'data'>>): Uint8Array {
  const r = { ...recordOf(file, seq), ...change }
  const key = fromBase64Url(recordOf(file, 0).subject)!
  const hex = (n: number) => n.toString(16)
  const signed = `${hex(r.seq)}|${hex(r.time)}|${hex(r.type)}|${r.result}|${r.subject}|${r.data}|`
  return withLine(file, seq, `${signed}${lineMac(key, signed)}`)
}

function flipped(bytes: Uint8Array, at = 0): Uint8Array {
  const copy = new Uint8Array(bytes)
  copy[at]! ^= 0x01
  return copy
}

const lastSeq = (file: JournalFile) => [...readLines(file.bytes)].filter((l) => l.kind === 'record').length - 1

t.test('a device journal over three boots and a rotation verifies in both', async (t) => {
  const { files, boots } = await journal
  t.ok(boots[1]!.length >= 3, 'boot 2 rotated into several files, linked to each other')
  const result = await both(t, files)
  t.ok(result.ok)
  t.same(result.problems, [])
  t.equal(result.summary.files, files.length)
  t.ok(result.summary.seals >= files.length - 1, 'every closed file is sealed')
})

t.test('every tampering is found by both, at the same file and line', async (t) => {
  const { files, boots } = await journal
  const first = files.find((f) => f.id === boots[0]![0])!
  const rotated = files.find((f) => f.id === boots[1]![1])!
  const middle = files.find((f) => f.id === boots[1]![2])!

  const cases: { name: string; files: JournalFile[]; key?: Uint8Array; at: Record<string, unknown> }[] = []
  const mac = recordOf(first, 3).mac
  const otherMac = `${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`
  cases.push({
    name: 'a byte of a MAC',
    files: replaced(files, first.id, withLine(first, 3, recordOf(first, 3).signed + otherMac)),
    at: { file: first.id, seq: 3, line: lineOf(first, 3), message: 'MAC does not match' },
  })
  const sealSeq = lastSeq(first)
  cases.push({
    name: 'the chain: a record rewritten with a valid MAC',
    files: replaced(files, first.id, rewritten(first, 3, { result: 1 })),
    at: { file: first.id, seq: sealSeq, line: lineOf(first, sealSeq), message: /^seal does not match the chain/ },
  })
  const seal = decodeRecordData(recordOf(first, sealSeq))!
  cases.push({
    name: "a seal's signature",
    files: replaced(
      files,
      first.id,
      rewritten(first, sealSeq, { data: packData({ ...seal, sig: flipped(seal.sig as Uint8Array) }) }),
    ),
    at: { file: first.id, seq: sealSeq, line: lineOf(first, sealSeq), message: /^seal signature does not verify/ },
  })
  const link = decodeRecordData(recordOf(rotated, 1))!
  cases.push({
    name: 'the link between two files',
    files: replaced(
      files,
      rotated.id,
      rewritten(rotated, 1, { data: packData({ ...link, head: flipped(link.head as Uint8Array) }) }),
    ),
    at: { file: rotated.id, seq: 1, line: lineOf(rotated, 1), message: /^LINK head does not match the chain of / },
  })
  const signature = fromBase64Url(recordOf(first, 0).data)!
  cases.push({
    name: 'the KEY_INIT signature',
    files: replaced(
      files,
      first.id,
      rewritten(first, 0, { data: Buffer.from(flipped(signature, 5)).toString('base64url') }),
    ),
    at: { file: first.id, seq: 0, line: lineOf(first, 0), message: /^KEY_INIT signature .* does not verify/ },
  })
  cases.push({
    name: 'a wrong log key',
    files,
    key: ed25519.getPublicKey(new Uint8Array(32).fill(9)),
    at: { file: files[0]!.id, seq: 0, message: /does not verify with the log key/ },
  })
  const cut = middle.bytes.subarray(0, middle.bytes.lastIndexOf(10, middle.bytes.length - 2) + 1)
  cases.push({
    name: 'a file cut at its end',
    files: replaced(files, middle.id, cut),
    at: { file: middle.id, line: lineOf(middle, lastSeq(middle) - 1), message: /unsealed record/ },
  })
  cases.push({
    name: 'a missing file in the middle',
    files: files.filter((f) => f.id !== middle.id),
    at: { seq: 1, message: new RegExp(`^LINK names previous file ${middle.id}, .*: ${middle.id} is missing`) },
  })

  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const result = await both(t, c.files, c.key)
      t.notOk(result.ok, 'refused')
      t.match(result.problems[0], c.at, 'the first problem names the place')
    })
  }
})
