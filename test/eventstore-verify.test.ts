import { ed25519 } from '@noble/curves/ed25519.js'
import { createHmac } from 'node:crypto'
import { Packr } from 'msgpackr'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { Journal, decodeRecordData, parseLine, readLines, verifyJournal } from '../eventstore/index.js'
import { packData } from '../eventstore/pack-data.js'
import { LogType, type JournalFile } from '../protocol/journal.js'
import { verifyClientStyle } from '../audit/index.js'
import { START, fixedClock, options, readSet, signer } from './helpers/journal-fixtures.js'

const OTHER = new Uint8Array(32).fill(9)

/** Three files A, B, C written by three opens; A has periodic seals every 4 records. */
async function journalSet(dir: string): Promise<JournalFile[]> {
  const media = new FileJournalMedia(dir)
  const clock = fixedClock()
  const base = options(media, { clock, sealEvery: 4 })
  for (const count of [9, 3, 2]) {
    const journal = await Journal.open(base)
    for (let i = 0; i < count; i++) {
      clock.advance(1000)
      await journal.append([
        { type: LogType.CRYPTO_ENCRYPT, result: 0, subject: 'U', data: { source: 200, kid: `k${i}` } },
      ])
    }
    await journal.close()
  }
  return readSet(media)
}

type Lines = string[]

/** A copy of the set with file `index`'s lines (split on \n, last one empty) changed by `edit`. */
function tamper(files: JournalFile[], index: number, edit: (lines: Lines) => Lines | void): JournalFile[] {
  return files.map((f, i) => {
    if (i !== index) return f
    const lines = Buffer.from(f.bytes).toString('utf8').split('\n')
    return { id: f.id, bytes: new Uint8Array(Buffer.from((edit(lines) ?? lines).join('\n'))) }
  })
}

/** Line index of record `seq` while the banner is the only comment. */
const at = (seq: number): number => seq + 1

function fields(line: string): string[] {
  return line.split('|')
}

function remac(line: string, key: Buffer): string {
  const signed = line.slice(0, line.lastIndexOf('|') + 1)
  return signed + createHmac('sha256', key).update(signed).digest().subarray(0, 16).toString('base64url')
}

function first(files: JournalFile[], opts = {}) {
  const result = verifyJournal(files, signer.publicKey, opts)
  return {
    ok: result.ok,
    file: result.problems[0]?.file,
    seq: result.problems[0]?.seq,
    message: result.problems[0]?.message ?? '',
  }
}

t.test('good files verify, and pass the client-style check', async (t) => {
  const files = await journalSet(t.testdir())
  t.equal(files.length, 3)
  const result = verifyJournal(files, signer.publicKey)
  t.same(result.problems, [])
  t.same(result.summary, {
    files: 3,
    records: 14 + 7 + 6,
    seals: 7,
    firstTime: START / 1000,
    lastTime: START / 1000 + 14,
  })
  t.same(verifyJournal([...files].reverse(), signer.publicKey), result, 'order of the input does not matter')
  for (const f of files) t.same(verifyClientStyle(f.bytes, signer.publicKey), { ok: true, problems: [] })
  t.same(
    verifyJournal(files.slice(1), signer.publicKey, { allowMissingStart: true }).problems,
    [],
    'the first file of a set may link outside it when the auditor allows it',
  )
  t.match(verifyJournal(files.slice(1), signer.publicKey).problems, [
    {
      file: files[1]!.id,
      seq: 1,
      message: `LINK names previous file ${files[0]!.id}, which is not given: older files are missing`,
    },
  ])
})

t.test('edited fields are caught by the MAC, first bad record first', async (t) => {
  const files = await journalSet(t.testdir())
  const edits: Record<string, (f: string[]) => void> = {
    data: (f) => void (f[5] = f[5]!.slice(0, -2) + (f[5]!.endsWith('AA') ? 'AB' : 'AA')),
    time: (f) => void (f[1] = (parseInt(f[1]!, 16) + 1).toString(16)),
    result: (f) => void (f[3] = '1'),
  }
  for (const [name, edit] of Object.entries(edits)) {
    const bad = tamper(files, 0, (lines) => {
      for (const seq of [6, 3]) {
        const f = fields(lines[at(seq)]!)
        edit(f)
        lines[at(seq)] = f.join('|')
      }
    })
    t.same(first(bad), { ok: false, file: files[0]!.id, seq: 3, message: 'MAC does not match' }, name)
    t.equal(verifyClientStyle(bad[0]!.bytes, signer.publicKey).ok, false, `${name}: a client sees it too`)
  }
})

t.test('a deleted line, swapped lines and an inserted comment break seq and chain', async (t) => {
  const files = await journalSet(t.testdir())
  const deleted = first(tamper(files, 0, (lines) => void lines.splice(at(3), 1)))
  t.same(deleted, {
    ok: false,
    file: files[0]!.id,
    seq: 4,
    message: 'seq 4 where 3 was expected: a record was removed, inserted or reordered',
  })
  const swapped = tamper(files, 0, (lines) => void ([lines[at(3)], lines[at(4)]] = [lines[at(4)]!, lines[at(3)]!]))
  t.match(first(swapped), { file: files[0]!.id, seq: 4, message: /^seq 4 where 3 was expected/ })
  t.ok(verifyClientStyle(swapped[0]!.bytes, signer.publicKey).ok, 'a client cannot see reordering')
  const commented = tamper(files, 0, (lines) => void lines.splice(at(3), 0, '# nothing to see'))
  t.match(first(commented), {
    seq: 4,
    message: /^seal does not match the chain: a line between the start of the file and this seal/,
  })
})

t.test('a MAC recomputed with K passes the client check but not the chain', async (t) => {
  const files = await journalSet(t.testdir())
  const forged = tamper(files, 0, (lines) => {
    const key = Buffer.from(fields(lines[at(0)]!)[4]!, 'base64url')
    const f = fields(lines[at(7)]!)
    f[5] = new Packr({ useRecords: false }).pack({ source: 200, kid: 'forged' }).toString('base64url')
    lines[at(7)] = remac(f.join('|'), key)
  })
  t.same(verifyClientStyle(forged[0]!.bytes, signer.publicKey), { ok: true, problems: [] })
  t.same(first(forged), {
    ok: false,
    file: files[0]!.id,
    seq: 9,
    message:
      'seal does not match the chain: ' +
      'a line between the seal at seq 4 and this seal was changed, inserted, removed or reordered',
  })
  const result = verifyJournal(forged, signer.publicKey)
  t.same(
    result.problems.map((p) => [p.file, p.seq]),
    [
      [files[0]!.id, 9],
      [files[1]!.id, 1],
    ],
    'later seals do not repeat the finding',
  )
  t.equal(result.problems[1]?.message, `LINK head does not match the chain of ${files[0]!.id}`)

  const appended = tamper(files, 2, (lines) => {
    const key = Buffer.from(fields(lines[at(0)]!)[4]!, 'base64url')
    const last = fields(lines.at(-2)!)
    lines.splice(-1, 0, remac(`${(parseInt(last[0]!, 16) + 1).toString(16)}|${last[1]}|15|0|M||`, key))
  })
  t.ok(verifyClientStyle(appended[2]!.bytes, signer.publicKey).ok)
  t.match(first(appended), { file: files[2]!.id, seq: 6, message: "record after the file's close seal" })
})

t.test('truncation and missing files are caught', async (t) => {
  const files = await journalSet(t.testdir())
  const [a, b, c] = files.map((f) => f.id)
  const cut = tamper(files, 1, (lines) => void lines.splice(-4, 3))
  t.same(
    verifyJournal(cut, signer.publicKey).problems.map((p) => [p.file, p.seq, p.message]),
    [
      [
        b,
        3,
        'file ends with 4 unsealed record(s) and no close, rotate or recovered seal: ' +
          'records were removed from its end, or it is still open',
      ],
      [c, 1, `LINK says ${b} ends at seq 6, but it ends at seq 3: records were removed from its end`],
    ],
  )
  const cutLast = tamper(files, 2, (lines) => void lines.splice(-2, 1))
  t.match(first(cutLast), { file: c, seq: 4, message: /^file ends at a periodic seal and no close/ })
  t.same(verifyJournal(cutLast, signer.publicKey, { allowOpenTail: true }).problems, [])
  t.same(verifyJournal(cutLast, signer.publicKey, { allowOpenTail: true }).summary.openTail, { file: c, records: 0 })
  t.match(first(cutLast.slice(0, 2).concat(cutLast[2]!, files[1]!), { allowOpenTail: true }), {
    message: 'file appears twice in the set',
  })

  t.same(first([files[0]!, files[2]!]), {
    ok: false,
    file: c,
    seq: 1,
    message: `LINK names previous file ${b}, but the file before it in the set is ${a}: ${b} is missing`,
  })
  t.match(first([{ id: 'nothex!!', bytes: files[0]!.bytes }]), { message: 'file id is not 8 lowercase hex chars' })
  t.match(
    first([{ id: b!, bytes: files[0]!.bytes }]),
    { file: b, seq: 4, message: /^seal signature does not verify/ },
    'renamed file',
  )
  t.match(first([files[0]!, { id: c!, bytes: new Uint8Array() }]), { file: c, message: 'file has no records' })
})

t.test('signatures are checked against the log key', async (t) => {
  const files = await journalSet(t.testdir())
  const stranger = ed25519.getPublicKey(OTHER)
  const result = verifyJournal(files, stranger)
  t.match(result.problems[0], {
    file: files[0]!.id,
    seq: 0,
    message: 'KEY_INIT signature of the file key does not verify with the log key',
  })
  t.equal(verifyClientStyle(files[0]!.bytes, stranger).ok, false)
  t.throws(() => verifyJournal(files, new Uint8Array(31)), TypeError)
})

t.test('syntax errors name the line', async (t) => {
  const files = await journalSet(t.testdir())
  const bad = tamper(files, 0, (lines) => void (lines[at(2)] = lines[at(2)]!.replace('|', '||')))
  t.match(first(bad), { file: files[0]!.id, seq: undefined, message: 'expected 7 fields, found 8' })
  t.equal(verifyJournal(bad, signer.publicKey).problems[0]?.line, at(2) + 1)
  t.same(verifyClientStyle(bad[0]!.bytes, signer.publicKey).problems, [`line ${at(2) + 1}: expected 7 fields, found 8`])
  const torn = [{ id: files[0]!.id, bytes: files[0]!.bytes.subarray(0, -5) }]
  t.match(verifyJournal(torn, signer.publicKey).problems[0], { message: 'incomplete last line (no newline)' })
})

t.test('parseLine', async (t) => {
  const mac = 'A'.repeat(22)
  t.same(parseLine(`1f|65a1b2c3|82|2|U|gA|${mac}`), {
    ok: true,
    record: {
      seq: 31,
      time: 0x65a1b2c3,
      type: 0x82,
      result: 2,
      subject: 'U',
      data: 'gA',
      mac,
      signed: '1f|65a1b2c3|82|2|U|gA|',
    },
  })
  const errors: Record<string, string> = {
    [`1|2|3|0|U|${mac}`]: 'expected 7 fields, found 6',
    [`1F|2|3|0|||${mac}`]: "seq is not lowercase hex without padding: '1F'",
    [`01|2|3|0|||${mac}`]: "seq is not lowercase hex without padding: '01'",
    [`1|2|10000|0|||${mac}`]: "type is not lowercase hex without padding: '10000'",
    [`1|2|3|3|||${mac}`]: "result must be 0, 1 or 2, found '3'",
    [`1|2|3|0||a=|${mac}`]: 'data is not base64url',
    [`1|2|3|0|||AAAA`]: 'mac is not 16 bytes of base64url',
  }
  for (const [line, error] of Object.entries(errors)) t.same(parseLine(line), { ok: false, error }, line)
})

t.test('readLines and decodeRecordData give replay tools the records', async (t) => {
  const files = await journalSet(t.testdir())
  const lines = [...readLines(files[1]!.bytes)]
  t.same(lines[0], { kind: 'comment', line: 1, bytes: lines[0]!.bytes, text: `# hemd test ${files[1]!.id}` })
  const data = lines.flatMap((l) =>
    l.kind === 'record' && l.record.type === LogType.CRYPTO_ENCRYPT ? [decodeRecordData(l.record)] : [],
  )
  t.same(
    data,
    [0, 1, 2].map((i) => ({ source: 200, kid: `k${i}` })),
  )
  const keyInit = lines[1]!
  t.equal(keyInit.kind === 'record' && decodeRecordData(keyInit.record), undefined, 'KEY_INIT data is not a map')
})

t.test('a record out of its place, or its data malformed, is named even with a valid MAC', async (t) => {
  const files = await journalSet(t.testdir())
  const a = files[0]!
  const key = Buffer.from(fields(Buffer.from(a.bytes).toString('utf8').split('\n')[at(0)]!)[4]!, 'base64url')
  const hex = (n: number) => n.toString(16)
  /** File A with record `seq`'s field `index` set to `value`, its MAC made again with K as anyone holding A could. */
  const edited = (seq: number, index: number, value: string) =>
    tamper([a], 0, (lines) => {
      const f = fields(lines[at(seq)]!)
      f[index] = value
      lines[at(seq)] = remac(f.join('|'), key)
    })
  const TYPE = 2
  const SUBJECT = 4
  const DATA = 5
  const head = new Uint8Array(32)
  const cases: [string, JournalFile[], number, string][] = [
    ['record 0 of another type', edited(0, TYPE, hex(LogType.CRYPTO_ENCRYPT)), 0, 'record 0 must be KEY_INIT'],
    ['a file key that is no key', edited(0, SUBJECT, 'AAAA'), 0, 'KEY_INIT subject is not a 32-byte key'],
    ['a file key signature that is none', edited(0, DATA, 'AAAA'), 0, 'KEY_INIT data is not a 64-byte signature'],
    ['KEY_INIT later', edited(3, TYPE, hex(LogType.KEY_INIT)), 3, 'KEY_INIT is only allowed as record 0'],
    ['record 1 of another type', edited(1, TYPE, hex(LogType.CRYPTO_ENCRYPT)), 1, 'record 1 must be LINK'],
    ['LINK later', edited(3, TYPE, hex(LogType.LINK)), 3, 'LINK is only allowed as record 1'],
    ['LINK without data', edited(1, DATA, ''), 1, 'LINK data is malformed'],
    ['LINK data that is no msgpack', edited(1, DATA, 'wQ'), 1, 'LINK data is malformed'],
    ['LINK to no file id', edited(1, DATA, packData({ prev: 'nothex!!', head, seq: 0 })), 1, 'LINK data is malformed'],
    [
      'LINK with a short head',
      edited(1, DATA, packData({ prev: '00000001', head: head.subarray(1), seq: 0 })),
      1,
      'LINK data is malformed',
    ],
    [
      'LINK with a negative seq',
      edited(1, DATA, packData({ prev: '00000001', head, seq: -1 })),
      1,
      'LINK data is malformed',
    ],
    ['SEAL without data', edited(4, DATA, ''), 4, 'SEAL data is malformed'],
    [
      'SEAL without its signature',
      edited(4, DATA, packData({ head, reason: 'periodic' })),
      4,
      'SEAL data is malformed',
    ],
  ]
  for (const [what, set, seq, message] of cases) t.match(first(set), { ok: false, file: a.id, seq, message }, what)

  const lines = Buffer.from(a.bytes).toString('utf8').split('\n')
  t.match(
    first([{ id: a.id, bytes: new Uint8Array(Buffer.from(`${lines[0]}\n${lines[at(0)]}\n`)) }]),
    { file: a.id, seq: undefined, message: 'file ends before its LINK record' },
    'a file cut after its KEY_INIT',
  )
})

t.test('a LINK that vouches for nothing, or for no previous file, while one is before it in the set', async (t) => {
  const dir = t.testdir()
  const media = new FileJournalMedia(dir)
  const clock = fixedClock()
  const journal = await Journal.open(options(media, { clock }))
  await journal.append([{ type: LogType.CRYPTO_ENCRYPT, result: 0, subject: 'U', data: { source: 200 } }])
  await journal.close()
  const [broken] = await media.list()
  // The file's KEY_INIT no longer verifies: the next open finds nothing of it it could vouch for.
  const path = join(dir, `${broken}.log`)
  const text = await readFile(path, 'utf8')
  const keyInit = text.split('\n')[at(0)]!
  await writeFile(path, text.replace(keyInit, keyInit.replace(/\|0\|0\|/, '|0|1|')))
  clock.advance(10_000)
  const next = await Journal.open(options(media, { clock }))
  await next.close()
  const set = await readSet(media)
  const problems = verifyJournal(set, signer.publicKey).problems
  t.match(problems[0], { file: broken, seq: 0, message: 'record 0 must be KEY_INIT (type 0, result 0)' })
  t.same(problems.at(-1), {
    file: set[1]!.id,
    seq: 1,
    line: 3,
    message: `LINK vouches for nothing in ${broken}: it was found broken when this file was opened`,
  })

  // A journal started afresh later, its files given after the old ones.
  const fresh = new FileJournalMedia(join(dir, 'fresh'))
  const later = await Journal.open(options(fresh, { clock: fixedClock(START + 100_000) }))
  await later.close()
  const [first] = await readSet(fresh)
  t.match(verifyJournal([...set.slice(1), first!], signer.publicKey, { allowMissingStart: true }).problems, [
    {
      file: first!.id,
      seq: 1,
      message: `LINK names no previous file, but the file before it in the set is ${set[1]!.id}`,
    },
  ])
})
