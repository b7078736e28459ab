// A public key as PEM (a SubjectPublicKeyInfo, RFC 5280), what other tools read and write, and
// back: the device itself speaks raw keys (crypto-contract §1).
import { fromBase64 } from '../../../client/browser.js'
import { fromPem, toPem } from '../../../hal/browser.js'
import { keyTypes, type KeyType, type KeyTypeOf } from '../../../protocol/browser.js'

export type PublicKeyType = KeyTypeOf<'ecdh' | 'eddsa' | 'ec' | 'mlkem' | 'mldsa'>

const EC_PUBLIC_KEY = '1.2.840.10045.2.1'

/** The algorithm OID of each type, and for the SECP curves the curve's (RFC 8410, RFC 5480, FIPS 203/204 OIDs). */
const ALGORITHMS: Record<PublicKeyType, readonly string[]> = {
  CURVE25519: ['1.3.101.110'],
  CURVE448: ['1.3.101.111'],
  ED25519: ['1.3.101.112'],
  ED448: ['1.3.101.113'],
  SECP256R1: [EC_PUBLIC_KEY, '1.2.840.10045.3.1.7'],
  SECP384R1: [EC_PUBLIC_KEY, '1.3.132.0.34'],
  SECP521R1: [EC_PUBLIC_KEY, '1.3.132.0.35'],
  SECP256K1: [EC_PUBLIC_KEY, '1.3.132.0.10'],
  MLKEM512: ['2.16.840.1.101.3.4.4.1'],
  MLKEM768: ['2.16.840.1.101.3.4.4.2'],
  MLKEM1024: ['2.16.840.1.101.3.4.4.3'],
  MLDSA44: ['2.16.840.1.101.3.4.3.17'],
  MLDSA65: ['2.16.840.1.101.3.4.3.18'],
  MLDSA87: ['2.16.840.1.101.3.4.3.19'],
}

const SEQUENCE = 0x30
const BIT_STRING = 0x03
const OID = 0x06

/** Text that is no public key this app can read; the message says what was expected. */
export class PublicKeyFormatError extends Error {
  override readonly name = 'PublicKeyFormatError'
}

export function isPublicKeyType(type: KeyType): type is PublicKeyType {
  return Object.hasOwn(ALGORITHMS, type)
}

/** The lengths import takes: the raw key, and for the SECP curves also the uncompressed SEC1 point. */
export function importLengths(type: PublicKeyType): number[] {
  const info = keyTypes[type]
  return info.kind === 'ec' ? [info.publicKey, 2 * (info.publicKey - 1) + 1] : [info.publicKey]
}

function tlv(tag: number, content: Uint8Array): Uint8Array {
  const n = content.length
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff]
  return Uint8Array.from([tag, ...length, ...content])
}

function oid(dotted: string): Uint8Array {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number)
  const bytes = [40 * first + second]
  for (const arc of rest) {
    const base128 = [arc & 0x7f]
    for (let v = arc >>> 7; v > 0; v >>>= 7) base128.unshift((v & 0x7f) | 0x80)
    bytes.push(...base128)
  }
  return tlv(OID, Uint8Array.from(bytes))
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => [...part]))
}

/** The key as `-----BEGIN PUBLIC KEY-----`, 64 base64 characters a line. */
export function publicKeyPem(type: PublicKeyType, raw: Uint8Array): string {
  const algorithm = tlv(SEQUENCE, concat(...ALGORITHMS[type].map(oid)))
  const spki = tlv(SEQUENCE, concat(algorithm, tlv(BIT_STRING, concat(Uint8Array.of(0), raw))))
  return toPem('PUBLIC KEY', spki)
}

/** Reads one DER element at `at`: its tag, its content, and where the next begins. */
function element(der: Uint8Array, at: number): { tag: number; content: Uint8Array; end: number } {
  const tag = der[at]
  let length = der[at + 1]
  let start = at + 2
  if (tag === undefined || length === undefined) throw new PublicKeyFormatError('The PEM ends too early.')
  if (length > 0x80) {
    const bytes = length - 0x80
    length = 0
    for (let i = 0; i < bytes; i++) length = length * 256 + (der[start + i] ?? 0)
    start += bytes
  }
  if (start + length > der.length) throw new PublicKeyFormatError('The PEM ends too early.')
  return { tag, content: der.subarray(start, start + length), end: start + length }
}

function dotted(content: Uint8Array): string {
  const arcs: number[] = []
  let value = 0
  for (const byte of content) {
    value = value * 128 + (byte & 0x7f)
    if (byte & 0x80) continue
    if (arcs.length === 0) arcs.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80)
    else arcs.push(value)
    value = 0
  }
  return arcs.join('.')
}

function readSpki(der: Uint8Array): { type: PublicKeyType; bytes: Uint8Array } {
  const spki = element(der, 0)
  const algorithm = element(spki.content, 0)
  const key = element(spki.content, algorithm.end)
  if (spki.tag !== SEQUENCE || algorithm.tag !== SEQUENCE || key.tag !== BIT_STRING || key.content[0] !== 0)
    throw new PublicKeyFormatError('The PEM holds no SubjectPublicKeyInfo.')
  const oids: string[] = []
  for (let at = 0; at < algorithm.content.length;) {
    const part = element(algorithm.content, at)
    if (part.tag === OID) oids.push(dotted(part.content))
    at = part.end
  }
  const type = (Object.keys(ALGORITHMS) as PublicKeyType[]).find(
    (name) => ALGORITHMS[name].join() === oids.slice(0, ALGORITHMS[name].length).join(),
  )
  if (!type)
    throw new PublicKeyFormatError(`The PEM holds a key of an algorithm the device has no type for (${oids[0]}).`)
  return { type, bytes: key.content.slice(1) }
}

/**
 * What the user pasted: a PEM public key (its type read from it) or the raw key in base64.
 * Throws a PublicKeyFormatError saying what is wrong.
 */
export function readPublicKey(text: string): { type?: PublicKeyType; bytes: Uint8Array } {
  try {
    const [der] = fromPem(text, 'PUBLIC KEY')
    if (der) return readSpki(der)
    const trimmed = text.trim()
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) throw new PublicKeyFormatError('')
    return { bytes: fromBase64(trimmed) }
  } catch (error) {
    if (error instanceof PublicKeyFormatError && error.message) throw error
    throw new PublicKeyFormatError(
      'Paste a PEM public key (-----BEGIN PUBLIC KEY-----) or the raw key in base64 (standard alphabet).',
    )
  }
}
