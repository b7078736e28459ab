// The journal's strict msgpack decoder against msgpackr's Unpackr, on what Packr writes (generated values with
// fast-check's fixed seed, edge values, the records of a device journal), then on what it must refuse.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import fc from 'fast-check'
import { FLOAT32_OPTIONS, Packr } from 'msgpackr'
import { Unpackr } from 'msgpackr/unpack'
import t, { type Test } from 'tap'
import { fromBase64Url, readLines } from '../eventstore/index.js'
import { decodeMsgpack, MAX_DEPTH, MsgpackError } from '../eventstore/msgpack-map.js'
import { LogType } from '../protocol/journal.js'
import { writeDeviceJournal } from './helpers/journal-fixtures.js'

const packr = new Packr({ useRecords: false })
// Packr writes every object as a map16 unless told to size its maps: fixmaps and map32s come from this one.
const sizedPackr = new Packr({ useRecords: false, variableMapSize: true })
const unpackr = new Unpackr({ useRecords: false })
const SEED = 0x39
const hex = (text: string) => new Uint8Array(Buffer.from(text.replace(/ /g, ''), 'hex'))

/** msgpackr's reading with its bins as plain Uint8Array copies: Buffers and views of its input, as it gives them. */
function plain(value: unknown): unknown {
  if (value instanceof Uint8Array) return new Uint8Array(value)
  if (Array.isArray(value)) return value.map(plain)
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) out[key] = plain(item)
    return out
  }
  return value
}

/** Both decoders on `bytes` must give the same value. */
function agree(bytes: Uint8Array, what?: string) {
  const theirs = plain(unpackr.unpack(bytes))
  assert.deepStrictEqual(decodeMsgpack(bytes), theirs, what)
}

/** `bytes` must be refused with a MsgpackError whose message matches `message`. */
function refuses(t: Test, bytes: Uint8Array, message: RegExp, what: string) {
  t.throws(() => decodeMsgpack(bytes), { name: 'MsgpackError', message }, what)
}

const BIG_MAP = Object.fromEntries(Array.from({ length: 70_000 }, (_, i) => [`k${i}`, i]))
const EDGES = [
  0,
  -1,
  -32,
  -33,
  127,
  128,
  255,
  256,
  -128,
  -129,
  -32768,
  -32769,
  2 ** 16 - 1,
  2 ** 16,
  2 ** 31,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 53 - 1,
  -(2 ** 31),
  -(2 ** 31) - 1,
  -(2 ** 53) + 1,
  1.5,
  -0,
  NaN,
  Infinity,
  -Infinity,
  Number.MIN_VALUE,
  Number.MAX_VALUE,
  0n,
  -1n,
  2n ** 63n - 1n,
  2n ** 63n,
  2n ** 64n - 1n,
  -(2n ** 63n),
  '',
  '\uFEFFbom',
  'é€𝄞',
  'x'.repeat(31),
  'x'.repeat(32),
  'x'.repeat(255),
  'x'.repeat(256),
  'é'.repeat(40_000),
  'x'.repeat(70_000),
  new Uint8Array(0),
  new Uint8Array(255).fill(1),
  new Uint8Array(256).fill(2),
  new Uint8Array(70_000).fill(3),
  null,
  undefined,
  true,
  false,
  [],
  {},
  Array.from({ length: 16 }, (_, i) => i),
  Array.from({ length: 70_000 }, (_, i) => i & 0x7f),
  Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, i])),
  BIG_MAP,
  { a: { b: { c: [1, { d: [undefined, null, 'e'] }] } } },
]

t.test('edge values, alone and in a map, as msgpackr reads them', async (t) => {
  for (const value of EDGES) {
    const what = typeof value === 'string' && value.length > 40 ? `a string of ${value.length}` : String(value)
    agree(sizedPackr.pack(value), what)
    agree(sizedPackr.pack({ value, after: 1 }), `${what} in a sized map`)
    if (value !== BIG_MAP) agree(packr.pack({ value, after: 1 }), `${what} in a map`)
  }
  // Packr writes 64-bit ints for BigInts only; msgpackr's Unpackr gives them as BigInts whatever their size.
  for (const bytes of ['cf 0000000000000001', 'cf 0020000000000001', 'd3 ffffffffffffffff', 'd3 8000000000000000']) {
    agree(hex(bytes), bytes)
  }
  t.equal(decodeMsgpack(hex('cf 0000000000000001')), 1n, 'uint64 1 is 1n')
  t.pass(`${EDGES.length} values`)
})

const leaf = fc.oneof(
  fc.constantFrom(null, undefined, true, false),
  fc.constantFrom(...EDGES.filter((value) => typeof value !== 'object' || value === null)),
  fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }),
  fc.maxSafeInteger(),
  fc.double(),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', minLength: 20, maxLength: 300 }),
  fc.uint8Array({ maxLength: 300 }),
)
const key = fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 40 }))
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ maxDepth: 8, depthSize: 'small' }, leaf, tie('array'), tie('map')),
  array: fc.array(tie('value'), { maxLength: 20 }),
  map: fc.dictionary(
    key.filter((k) => k !== '__proto__'),
    tie('value'),
    { maxKeys: 20, noNullPrototype: true },
  ),
}))

t.test('generated values: the same as msgpackr gives', async (t) => {
  fc.assert(
    fc.property(value, (v) => agree(packr.pack(v))),
    { seed: SEED, numRuns: 1000 },
  )
  fc.assert(
    fc.property(value, (v) => agree(sizedPackr.pack({ data: v }))),
    { seed: SEED + 1, numRuns: 300 },
  )
  t.pass('1300 values')
})

t.test('float32, which Packr writes when told to', async (t) => {
  const float32 = new Packr({ useRecords: false, useFloat32: FLOAT32_OPTIONS.ALWAYS })
  fc.assert(
    fc.property(fc.float(), (f) => {
      const bytes = float32.pack(f)
      if (Number.isFinite(f) && !Number.isInteger(f)) assert.equal(bytes[0], 0xca, 'a float32')
      agree(bytes)
    }),
    { seed: SEED, numRuns: 500 },
  )
  for (const bytes of ['ca 3dcccccd', 'ca 7f800000', 'ca ff800000', 'ca 7fc00000', 'ca 80000000', 'ca 00000001']) {
    agree(hex(bytes), bytes)
  }
  t.pass('500 values')
})

t.test('every record of a device journal: the same as msgpackr gives', async (t) => {
  const dir = t.testdir()
  const { boots } = await writeDeviceJournal(dir)
  const maps = []
  for (const id of boots.flat()) {
    for (const line of readLines(await readFile(join(dir, `${id}.log`)))) {
      if (line.kind !== 'record' || line.record.type === LogType.KEY_INIT || line.record.data === '') continue
      const bytes = fromBase64Url(line.record.data)!
      agree(bytes, `${id} #${line.record.seq}`)
      maps.push(decodeMsgpack(bytes))
    }
  }
  t.ok(maps.length >= 30, `${maps.length} records`)
  t.ok(
    maps.every((map) => typeof map === 'object' && Object.getPrototypeOf(map) === Object.prototype),
    'each a map',
  )
})

t.test('a bin is a plain Uint8Array that owns its bytes', async (t) => {
  const bytes = Buffer.from(packr.pack({ bin: new Uint8Array([1, 2, 3]) }))
  const { bin } = decodeMsgpack(bytes) as { bin: Uint8Array }
  bytes.fill(0)
  t.same([...bin], [1, 2, 3], 'not a view of the input')
  t.equal(Object.getPrototypeOf(bin), Uint8Array.prototype, 'not a Buffer')
})

t.test('refused: input cut short, at every length', async (t) => {
  const all = packr.pack({ ...Object.fromEntries(EDGES.slice(0, 40).map((v, i) => [`v${i}`, v])), n: [[{}]] })
  for (let length = 0; length < all.length; length++) {
    assert.throws(() => decodeMsgpack(all.subarray(0, length)), MsgpackError, `cut at ${length}`)
  }
  refuses(t, new Uint8Array(0), /^1 bytes needed at offset 0, 0 left$/, 'nothing')
  t.pass(`${all.length} lengths`)
})

t.test('refused: bytes after the value', async (t) => {
  refuses(t, hex('c0 c0'), /^1 bytes after the value$/, 'a second nil')
  refuses(t, new Uint8Array([...packr.pack({ a: 1 }), 0]), /^1 bytes after the value$/, 'a zero after a map')
})

t.test('refused: ext types other than undefined', async (t) => {
  refuses(t, packr.pack(new Date(0)), /^msgpack ext type -1 \(timestamp\) of 4 bytes is not journal data$/, 'a Date')
  refuses(t, packr.pack({ at: new Date(0) }), /ext type -1 \(timestamp\)/, 'a Date in a map')
  refuses(t, hex('d4 72 00'), /^msgpack ext type 114 \(record definition\) of 1 bytes is not/, 'a record')
  refuses(t, hex('d4 05 00'), /^msgpack ext type 5 of 1 bytes is not journal data$/, 'fixext 1, type 5')
  refuses(t, hex('c7 01 00 00'), /^msgpack ext type 0 of 1 bytes/, 'ext 8 of type 0: undefined is a fixext 1 only')
  const exts = { d5: 2, d6: 4, d7: 8, d8: 16, 'c7 03': 3, 'c8 0100': 256, 'c9 00010000': 65536 }
  for (const [token, length] of Object.entries(exts)) {
    refuses(t, hex(`${token} 07`), new RegExp(`^msgpack ext type 7 of ${length} bytes`), `ext ${token}`)
  }
  refuses(t, hex('d4 00 01'), /^undefined \(ext 0\) at offset 0 has a non-zero byte$/, 'undefined with a stray byte')
  refuses(t, hex('c1'), /^msgpack type 0xc1 at offset 0 is never valid$/, '0xc1')
})

t.test('refused: strings that are not UTF-8', async (t) => {
  refuses(t, hex('a2 ff 61'), /^the string bytes at offset 1 are not UTF-8$/, 'a stray 0xff')
  refuses(t, hex('a2 c0 80'), /not UTF-8/, 'an overlong NUL')
  refuses(t, hex('a3 ed a0 80'), /not UTF-8/, 'a lone surrogate')
  refuses(t, hex('a1 e2'), /not UTF-8/, 'a sequence cut short')
  refuses(t, hex('81 a1 ff 01'), /^the string bytes at offset 2 are not UTF-8$/, 'as a key')
})

t.test('refused: map keys that are not strings, __proto__, or written twice', async (t) => {
  refuses(t, hex('81 01 02'), /^the map key at offset 1 is not a string$/, 'an int key')
  refuses(t, hex('81 c0 02'), /^the map key at offset 1 is not a string$/, 'a nil key')
  refuses(t, hex('81 c4 01 61 02'), /^the map key at offset 1 is not a string$/, 'a bin key')
  refuses(t, hex('81 a9 5f5f70726f746f5f5f 80'), /^the map key at offset 1 is __proto__$/, '__proto__')
  refuses(t, hex('82 a1 61 01 a1 61 02'), /^the map key at offset 4 repeats an earlier key$/, 'a repeated key')
  refuses(t, hex('82 a1 61 01 d9 01 61 02'), /repeats an earlier key/, 'repeated in another spelling')
  t.same(decodeMsgpack(hex('81 a8 746f537472696e67 01')), { toString: 1 }, 'a key Object.prototype has is its own')
})

t.test('refused: a length beyond the input, before anything is allocated', async (t) => {
  // Each message names the length the header claims: a decoder that trusted it would fail later, or not at all.
  refuses(t, hex('db ffffffff 61'), /^4294967295 bytes needed at offset 5, 1 left$/, 'str32')
  refuses(t, hex('c6 ffffffff 61'), /^4294967295 bytes needed at offset 5, 1 left$/, 'bin32')
  refuses(t, hex('dd ffffffff 01'), /^4294967295 bytes needed at offset 5, 1 left$/, 'array32')
  refuses(t, hex('df ffffffff a161 01'), /^8589934590 bytes needed at offset 5, 3 left$/, 'map32')
  refuses(t, hex('93 01 02'), /^3 bytes needed at offset 1, 2 left$/, 'a fixarray of 3 with 2')
  refuses(t, hex('82 a1 61 01'), /^4 bytes needed at offset 1, 3 left$/, 'a fixmap of 2 in 3 bytes')
  refuses(t, hex('da 0003 61 62'), /^3 bytes needed at offset 3, 2 left$/, 'str16')
})

t.test(`refused: containers nested deeper than ${MAX_DEPTH}`, async (t) => {
  const nest = (depth: number, inner: unknown = 1): unknown => (depth === 0 ? inner : [nest(depth - 1, inner)])
  agree(packr.pack(nest(MAX_DEPTH)), `${MAX_DEPTH} arrays`)
  refuses(t, packr.pack(nest(MAX_DEPTH + 1)), /^containers nested deeper than 32$/, 'one more')
  const maps = (depth: number): unknown => (depth === 0 ? 1 : { m: maps(depth - 1) })
  agree(packr.pack(maps(MAX_DEPTH)), `${MAX_DEPTH} maps`)
  refuses(t, packr.pack(maps(MAX_DEPTH + 1)), /^containers nested deeper than 32/, 'one more map')
})
