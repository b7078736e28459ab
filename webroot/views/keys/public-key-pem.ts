// A public key as PEM (a SubjectPublicKeyInfo, RFC 5280), what other tools read and write, and
// back: the device itself speaks raw keys (crypto-contract §1).
import { fromBase64 } from '../../../client/browser.js'
import { CURVES, fromPem, subjectPublicKeyInfo, toPem } from '../../../hal/browser.js'
import { keyTypes, type KeyType, type KeyTypeOf } from '../../../protocol/browser.js'

export type PublicKeyType = KeyTypeOf<'ecdh' | 'eddsa' | 'ec' | 'mlkem' | 'mldsa'>
type PostQuantumType = KeyTypeOf<'mlkem' | 'mldsa'>

/** FIPS 203/204's OIDs (NIST CSOR); the curves' are in their table (hal/crypto/curves.ts). */
const POST_QUANTUM_OIDS: Record<PostQuantumType, string> = {
  MLKEM512: '2.16.840.1.101.3.4.4.1',
  MLKEM768: '2.16.840.1.101.3.4.4.2',
  MLKEM1024: '2.16.840.1.101.3.4.4.3',
  MLDSA44: '2.16.840.1.101.3.4.3.17',
  MLDSA65: '2.16.840.1.101.3.4.3.18',
  MLDSA87: '2.16.840.1.101.3.4.3.19',
}

/** The AlgorithmIdentifier's OIDs of each type: for the SECP curves, id-ecPublicKey and the curve's. */
const ALGORITHMS = Object.fromEntries(
  Object.entries(keyTypes).flatMap(([type, info]): [string, readonly string[]][] => {
    if ('curve' in info) return [[type, CURVES[info.curve].oids]]
    return Object.hasOwn(POST_QUANTUM_OIDS, type) ? [[type, [POST_QUANTUM_OIDS[type as PostQuantumType]]]] : []
  }),
) as Readonly<Record<PublicKeyType, readonly string[]>>

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

/** The key as `-----BEGIN PUBLIC KEY-----`, 64 base64 characters a line. */
export function publicKeyPem(type: PublicKeyType, raw: Uint8Array): string {
  return toPem('PUBLIC KEY', subjectPublicKeyInfo(ALGORITHMS[type], raw))
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
