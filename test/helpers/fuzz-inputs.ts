// What the fuzz tests throw at the device: strings, values and whole request bodies of the kinds
// that break parsers and checks, as fast-check arbitraries. A body is generated as a plan (data,
// so that a counterexample prints readably) and rendered against the route's valid bodies at run
// time, when fresh values (a nonce, a challenge) are at hand.
import fc from 'fast-check'

const b64 = (bytes: Uint8Array | number[]) => Buffer.from(bytes).toString('base64')
const zeros = (n: number) => new Uint8Array(n)

/** X25519 points of small order: a shared secret with them is all zeros (RFC 7748 §6). */
const LOW_ORDER_X25519 = [
  zeros(32),
  Uint8Array.from([1, ...zeros(31)]),
  Uint8Array.from(Buffer.from('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800', 'hex')),
]

/** Strings that break parsers, and look-alikes of the API's own values. */
const SPECIAL_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\u0007',
  '\t',
  'null',
  'true',
  '0',
  '-1',
  '1e309',
  'NaN',
  '\ud800',
  '\udc00x',
  '\u202e',
  '\ufeff',
  '%00',
  '%',
  '%zz',
  '../../etc/passwd',
  '..',
  '.',
  '/',
  '\\',
  '*',
  '^',
  '$',
  '^$',
  '=',
  '====',
  'A',
  'AA',
  'AAA=',
  'AAAA',
  'AAAAA',
  '_-_-',
  '+/+/',
  'AQ==\n',
  ...LOW_ORDER_X25519.map(b64),
  b64(zeros(16)),
  b64(zeros(31)),
  b64(zeros(33)),
  b64(zeros(64)),
  b64(zeros(65)),
  Buffer.from(zeros(32)).toString('base64url'),
  '00'.repeat(16),
  'FF'.repeat(16),
  'ff'.repeat(15),
  'g'.repeat(32),
  '0x' + '0'.repeat(30),
  'AES256',
  'AES256-GCM',
  'aes256-gcm',
  'AES512-GCM',
  'CURVE25519',
  'SECP256R1',
  'ED25519',
  'SHA2-256',
  'ECDH',
  'ExDSA',
  'ECDH,ExDSA',
  'ECDH,',
  // The algorithms of crypto-contract §4 and look-alikes: each is unknown to all but its own routes.
  'Ed25519',
  'Ed25519ctx',
  'Ed25519ph',
  'Ed448',
  'Ed448ph',
  'ed25519',
  'SHA256WithECDSA',
  'SHA512WithECDSA',
  'SHA256withECDSA',
  'SHA1WithECDSA',
  'SHA3-256',
  'SHA3-512',
  'SHA2-384',
  'SHA2-257',
  'SHA-256',
  'AES128',
  'AES192',
  'MLKEM768',
  'MLDSA87',
  'ED448',
  'CURVE448',
  'SECP256K1',
  'SECP521R1',
  ',',
  'keymgmt:use:',
  'system:config',
  'U',
  'M',
  '1.1.1.1/33',
  '256.0.0.1',
  '*.',
  '*.a',
  'https://',
  'http://[::1]:99999',
  'xn--',
  '-a',
  'a'.repeat(64),
  'a'.repeat(254),
  'x'.repeat(65),
  '\u00e9'.repeat(64),
  '\u{1f600}'.repeat(33),
  '<script>',
  '"',
  "'",
  '\\u0000',
  '${x}',
  '{{x}}',
]

/** Numbers around the API's limits and JavaScript's. */
const SPECIAL_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  15,
  16,
  127,
  128,
  255,
  256,
  0x51,
  0xa3,
  65535,
  65536,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e21,
  1e308,
  5e-324,
]

/** JSON number and string literals that JSON.stringify never writes. */
const RAW_LITERALS = [
  '1e400',
  '-1e400',
  '-0',
  '0.0000000000000000000001',
  '123456789012345678901234567890',
  '1E2',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"\\u0000"',
  '"\\/"',
  '"a\\u0000b"',
  '[]',
  '{}',
  'null',
  'true',
  'false',
  '""',
]

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...SPECIAL_STRINGS), weight: 4 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.base64String({ maxLength: 96 }), weight: 2 },
  { arbitrary: fc.integer({ min: 60, max: 9000 }).map((n) => 'A'.repeat(n)), weight: 1 },
)

const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(...SPECIAL_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
)

export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: nastyString, weight: 4 },
  { arbitrary: nastyNumber, weight: 2 },
  { arbitrary: fc.boolean(), weight: 1 },
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: fc.array(nastyString, { maxLength: 3 }), weight: 1 },
  { arbitrary: fc.dictionary(nastyString, nastyString, { maxKeys: 3 }), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 1 },
)

/**
 * A field of a body: a number picks one of the valid body's own fields, nested ones included
 * (the mutations that leave a body almost valid); a string names a top-level one (of the
 * schema, or one it does not know).
 */
export type Field = number | string

/**
 * A request body as a plan. `variant` picks one of the route's valid bodies; the other kinds
 * break it: one field set to any value or to one that is special for its type, deleted, written
 * as a raw literal or with a byte of its base64 value flipped; the JSON text cut, a byte
 * inserted or replaced, wrapped in more text; or no valid body at all: nesting thousands deep,
 * a huge field, any JSON value, random bytes, nothing.
 */
export type BodyPlan =
  | { kind: 'valid'; variant: number }
  | { kind: 'set'; variant: number; field: Field; value: unknown }
  | { kind: 'special'; variant: number; field: Field; pick: number }
  | { kind: 'delete'; variant: number; field: Field }
  | { kind: 'raw'; variant: number; field: Field; literal: string }
  | { kind: 'flip'; variant: number; field: Field; at: number; xor: number }
  | { kind: 'cut'; variant: number; at: number }
  | { kind: 'byte'; variant: number; at: number; byte: number; replace: boolean }
  | { kind: 'wrap'; variant: number; prefix: string; suffix: string }
  | { kind: 'deep'; variant: number; field: Field; depth: number; array: boolean }
  | { kind: 'huge'; variant: number; field: Field; size: number }
  | { kind: 'shape'; value: Record<string, unknown> }
  | { kind: 'json'; value: unknown }
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'empty' }

const WRAPS = ['\ufeff', ' ', '\r\n', '[', ']', '}', '{', ',', '0', 'null', '//', '/*', '\u0000', '\u00a0']

/** Plans for a route whose bodies have these fields (every field of its schema, and some it has not). */
export function bodyPlan(fields: readonly string[]): fc.Arbitrary<BodyPlan> {
  // Mostly a field of the valid body; else one of the schema's, or one it does not name (schemas let those through).
  const field: fc.Arbitrary<Field> = fc.oneof(
    { arbitrary: fc.nat(), weight: 3 },
    { arbitrary: fc.constantFrom(...fields), weight: 1 },
    { arbitrary: fc.constantFrom('x', '__proto__', 'constructor', '', 'a'.repeat(300)), weight: 1 },
  )
  const variant = fc.nat(7)
  const at = fc.nat(400)
  return fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('valid' as const), variant }), weight: 2 },
    { arbitrary: fc.record({ kind: fc.constant('set' as const), variant, field, value: nastyValue }), weight: 8 },
    { arbitrary: fc.record({ kind: fc.constant('special' as const), variant, field, pick: fc.nat() }), weight: 8 },
    { arbitrary: fc.record({ kind: fc.constant('delete' as const), variant, field }), weight: 2 },
    {
      arbitrary: fc.record({
        kind: fc.constant('raw' as const),
        variant,
        field,
        literal: fc.constantFrom(...RAW_LITERALS),
      }),
      weight: 2,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('flip' as const),
        variant,
        field,
        at,
        xor: fc.integer({ min: 1, max: 255 }),
      }),
      weight: 3,
    },
    { arbitrary: fc.record({ kind: fc.constant('cut' as const), variant, at }), weight: 2 },
    {
      arbitrary: fc.record({
        kind: fc.constant('byte' as const),
        variant,
        at,
        byte: fc.nat(255),
        replace: fc.boolean(),
      }),
      weight: 2,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('wrap' as const),
        variant,
        prefix: fc.constantFrom('', ...WRAPS),
        suffix: fc.constantFrom('', ...WRAPS),
      }),
      weight: 1,
    },
    // Arrays nest deepest in the 7300 bytes a body may have.
    {
      arbitrary: fc.record({
        kind: fc.constant('deep' as const),
        variant,
        field,
        depth: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1500, max: 3600 })),
        array: fc.constant(true),
      }),
      weight: 3,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('deep' as const),
        variant,
        field,
        depth: fc.integer({ min: 1, max: 1400 }),
        array: fc.constant(false),
      }),
      weight: 1,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('huge' as const),
        variant,
        field,
        size: fc.oneof(fc.integer({ min: 7000, max: 7400 }), fc.integer({ min: 100, max: 20000 })),
      }),
      weight: 1,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('shape' as const),
        value: fc.dictionary(field, nastyValue, { maxKeys: 6 }),
      }),
      weight: 2,
    },
    { arbitrary: fc.record({ kind: fc.constant('json' as const), value: fc.jsonValue({ maxDepth: 4 }) }), weight: 1 },
    {
      arbitrary: fc.record({ kind: fc.constant('bytes' as const), bytes: fc.uint8Array({ maxLength: 600 }) }),
      weight: 1,
    },
    { arbitrary: fc.constant({ kind: 'empty' as const }), weight: 1 },
  )
}

/** Lengths at the limits of crypto-contract §3: `msg` 1–2048 bytes, `ctx` ≤ 64 or ≤ 255, `iv` 8. */
const LIMIT_LENGTHS = [7, 9, 64, 65, 255, 256, 2048, 2049]

/**
 * Compressed SEC1 look-alikes of a 33-byte point: an x of all ones (above the curve's prime), x = 0
 * (on P-256, not on secp256k1), and the prefixes of no compressed point.
 */
function offCurve(point: Buffer): Uint8Array[] {
  const x = point.subarray(1)
  return [
    Uint8Array.from([point[0]!, ...new Uint8Array(32).fill(255)]),
    Uint8Array.from([2, ...zeros(32)]),
    Uint8Array.from([4, ...x]),
    Uint8Array.from([0, ...x]),
  ]
}

/**
 * Values special for the type of a valid one: for base64 of n bytes, n bytes of zeros, ones and
 * 0xff, n ± 1 bytes, the lengths at §3's limits, other spellings, for 32 bytes the X25519 points
 * of small order, for a 33-byte compressed point ones off the curve; for a KID other cases and
 * lengths; for numbers and booleans their neighbours and look-alikes.
 */
function specialValues(value: unknown): unknown[] {
  if (typeof value === 'string' && /^[0-9a-f]{32}$/i.test(value))
    return [
      value.toUpperCase(),
      value.slice(1),
      `${value}0`,
      '0'.repeat(32),
      `${value.slice(1)}g`,
      ` ${value}`,
      `${value}\n`,
    ]
  const bytes = typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.alloc(0)
  if (bytes.length && bytes.toString('base64').replace(/=+$/, '') === String(value).replace(/=+$/, '')) {
    const n = bytes.length
    const keys = n === 32 ? LOW_ORDER_X25519 : n === 33 && (bytes[0] === 2 || bytes[0] === 3) ? offCurve(bytes) : []
    return [
      ...keys,
      ...LIMIT_LENGTHS.map((length) => Uint8Array.from({ length }, (_, i) => bytes[i % n]!)),
      zeros(n),
      Uint8Array.from([1, ...zeros(n - 1)]),
      new Uint8Array(n).fill(255),
      bytes.subarray(1),
      Buffer.concat([bytes, zeros(1)]),
      zeros(0),
    ]
      .map(b64)
      .concat([
        bytes.toString('base64url'),
        bytes.toString('base64').replace(/=+$/, ''),
        `${bytes.toString('base64')}=`,
        `${b64(bytes)}\n`,
        ` ${b64(bytes)}`,
      ])
  }
  if (typeof value === 'number') return [value + 1, value - 1, -value, value + 0.5, String(value), 2 ** 53, -1, 0]
  if (typeof value === 'boolean') return [String(value), Number(value), !value, null]
  if (typeof value === 'object' && value !== null) return [[], null, {}, JSON.stringify(value), [value]]
  return [null, 0, '', [], {}]
}

const MARK = '\u0001raw\u0001'
const REMOVE = Symbol('remove')

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Every field of a body by its path, nested ones too (`tls` and `tls.crt`). */
function fieldPaths(value: Json, prefix: string[] = []): string[][] {
  return Object.entries(value).flatMap(([key, v]) => [
    [...prefix, key],
    ...(isObject(v) ? fieldPaths(v, [...prefix, key]) : []),
  ])
}

function valueAt(body: Json, path: string[]): unknown {
  return path.reduce<unknown>((value, key) => (isObject(value) ? value[key] : undefined), body)
}

/** A copy of the body with the field at `path` set (or removed); missing objects on the way are made. */
function withValueAt(body: Json, [key, ...rest]: string[], value: unknown): Json {
  const { [key!]: old, ...others } = body
  if (rest.length > 0) return { ...others, [key!]: withValueAt(isObject(old) ? old : {}, rest, value) }
  return value === REMOVE ? others : { ...body, [key!]: value }
}

/** The bytes of a plan against the route's valid bodies (at least one; `{}` for a route without a body). */
export function renderBody(plan: BodyPlan, valid: readonly Json[]): Buffer {
  const base = 'variant' in plan ? valid[plan.variant % valid.length]! : {}
  const paths = fieldPaths(base)
  const pathOf = (field: Field) =>
    typeof field === 'number' ? (paths[field % Math.max(1, paths.length)] ?? ['x']) : [field]
  const text = (value: unknown) => Buffer.from(JSON.stringify(value) ?? '', 'utf8')
  /** The body with the plan's field set to JSON text written as is. */
  const withText = (field: Field, json: string) =>
    Buffer.from(JSON.stringify(withValueAt(base, pathOf(field), MARK)).replace(JSON.stringify(MARK), json), 'utf8')
  const baseText = text(base)
  switch (plan.kind) {
    case 'valid':
      return baseText
    case 'set':
      return text(withValueAt(base, pathOf(plan.field), plan.value))
    case 'special': {
      const values = specialValues(valueAt(base, pathOf(plan.field)))
      return text(withValueAt(base, pathOf(plan.field), values[plan.pick % values.length]))
    }
    case 'delete':
      return text(withValueAt(base, pathOf(plan.field), REMOVE))
    case 'raw':
      return withText(plan.field, plan.literal)
    case 'flip': {
      const value = valueAt(base, pathOf(plan.field))
      const bytes = typeof value === 'string' ? Buffer.from(value, 'base64') : undefined
      if (!bytes?.length) return baseText
      bytes[plan.at % bytes.length]! ^= plan.xor
      return text(withValueAt(base, pathOf(plan.field), bytes.toString('base64')))
    }
    case 'cut':
      return baseText.subarray(0, plan.at % Math.max(1, baseText.length))
    case 'byte': {
      const at = plan.at % (baseText.length + 1)
      return Buffer.concat([
        baseText.subarray(0, at),
        Buffer.from([plan.byte]),
        baseText.subarray(plan.replace ? at + 1 : at),
      ])
    }
    case 'wrap':
      return Buffer.concat([Buffer.from(plan.prefix, 'utf8'), baseText, Buffer.from(plan.suffix, 'utf8')])
    case 'deep': {
      const [open, close] = plan.array ? ['[', ']'] : ['{"":', '}']
      return withText(plan.field, open.repeat(plan.depth) + '1' + close.repeat(plan.depth))
    }
    case 'huge':
      return text(withValueAt(base, pathOf(plan.field), 'A'.repeat(plan.size)))
    case 'shape':
    case 'json':
      return text(plan.value)
    case 'bytes':
      return Buffer.from(plan.bytes)
    case 'empty':
      return Buffer.alloc(0)
  }
}

/** Content types a client might send with a JSON body, or instead of one. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      undefined,
      '',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json; charset=latin1',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      ';;;',
    ),
    weight: 3,
  },
)

/**
 * A header value as HTTP allows it: no control characters but tab (uWS leaves a request with
 * one unanswered, and CR or LF would make another request). Written as UTF-8, so anything
 * else is visible ASCII or bytes above 0x7f.
 */
export function headerSafe(text: string): string {
  return text.replace(/[\0-\x08\x0a-\x1f\x7f]/g, '?')
}

/** Percent-encodes every byte of the UTF-8 text that is not unreserved; lone surrogates become U+FFFD. */
export function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('')
}
