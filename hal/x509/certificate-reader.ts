// An X.509 certificate's fields, read without node: the management app shows the device's TLS certificate
// and checks its attestation certificate in the page. Reads DER only (what the device answers), strictly:
// one certificate, nothing after it. It checks no signature; the caller does, with what it trusts.
import { bytesToHex } from '@noble/hashes/utils.js'

/** The bytes are not one DER X.509 certificate. */
export class CertificateFormatError extends Error {
  override readonly name = 'CertificateFormatError'
}

export interface DistinguishedName {
  /** The Name's DER: what an issuer is compared by. */
  der: Uint8Array
  /** Its attributes in order, as `CN=…, O=…` (an unknown attribute by its OID). */
  text: string
  /** The first common name, when it has one. */
  commonName?: string
}

export interface CertificateFields {
  der: Uint8Array
  /** The TBSCertificate's DER: the bytes the issuer signed. */
  signed: Uint8Array
  /** The serial number in hex. */
  serial: string
  issuer: DistinguishedName
  subject: DistinguishedName
  notBefore: Date
  notAfter: Date
  /** SubjectPublicKeyInfo's DER. */
  spki: Uint8Array
  /** The key's algorithm OID, and for an EC key its curve's. */
  keyAlgorithm: string
  keyCurve?: string
  /** The signature's algorithm OID. */
  signatureAlgorithm: string
  /** The signature's bytes (the BIT STRING's content). */
  signature: Uint8Array
}

interface Tlv {
  tag: number
  /** The whole TLV. */
  der: Uint8Array
  content: Uint8Array
}

const SEQUENCE = 0x30
const SET = 0x31
const INTEGER = 0x02
const BIT_STRING = 0x03
const OID = 0x06
const UTC_TIME = 0x17
const GENERALIZED_TIME = 0x18

/** The TLV at `at` of `bytes`. */
function readTlv(bytes: Uint8Array, at: number): Tlv {
  const tag = bytes[at]
  let length = bytes[at + 1]
  if (tag === undefined || length === undefined) throw new CertificateFormatError('it ends inside a DER header')
  if ((tag & 0x1f) === 0x1f) throw new CertificateFormatError('a high-tag-number form, which X.509 does not use')
  let start = at + 2
  if (length & 0x80) {
    const count = length & 0x7f
    if (count === 0 || count > 4) throw new CertificateFormatError('a DER length of an unsupported form')
    length = 0
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[start + i] ?? NaN)
    start += count
    if (!(length >= 0x80) || bytes[at + 2] === 0)
      throw new CertificateFormatError('a DER length not in its shortest form')
  }
  const end = start + length
  if (!(end <= bytes.length)) throw new CertificateFormatError('a DER value runs past the end')
  return { tag, der: bytes.subarray(at, end), content: bytes.subarray(start, end) }
}

/** The TLVs one after another in `bytes`, all of it. */
function readAll(bytes: Uint8Array): Tlv[] {
  const items: Tlv[] = []
  for (let at = 0; at < bytes.length; at += items[items.length - 1]!.der.length) items.push(readTlv(bytes, at))
  return items
}

function expect(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (tlv?.tag !== tag) throw new CertificateFormatError(`${what} is missing or of the wrong type`)
  return tlv
}

function oid(content: Uint8Array): string {
  const arcs: number[] = []
  let value = 0
  for (const byte of content) {
    value = value * 128 + (byte & 0x7f)
    if (byte & 0x80) continue
    // The first byte's value holds the first two arcs: 40 × first + second, the first at most 2.
    const first = Math.min(2, Math.floor(value / 40))
    if (arcs.length === 0) arcs.push(first, value - 40 * first)
    else arcs.push(value)
    value = 0
  }
  return arcs.join('.')
}

/** Short names of the attributes people see in certificates (RFC 4514's and a few more). */
const ATTRIBUTE_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.5': 'serialNumber',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '0.9.2342.19200300.100.1.25': 'DC',
}

/** A directory string's text: UTF-8, the ASCII and Latin-1 kinds, or BMP (UTF-16 BE). */
function directoryString({ tag, content }: Tlv): string {
  if (tag === 0x1e) {
    let text = ''
    for (let i = 0; i + 1 < content.length; i += 2) text += String.fromCharCode(content[i]! * 256 + content[i + 1]!)
    return text
  }
  if (tag === 0x0c) return new TextDecoder().decode(content)
  return String.fromCharCode(...content)
}

function distinguishedName(name: Tlv): DistinguishedName {
  const parts: string[] = []
  let commonName: string | undefined
  for (const rdn of readAll(name.content)) {
    for (const pair of readAll(expect(rdn, SET, 'a name attribute set').content)) {
      const [type, value] = readAll(expect(pair, SEQUENCE, 'a name attribute').content)
      const id = oid(expect(type, OID, "an attribute's type").content)
      if (!value) throw new CertificateFormatError('a name attribute has no value')
      const text = directoryString(value)
      if (id === '2.5.4.3') commonName ??= text
      parts.push(`${ATTRIBUTE_NAMES[id] ?? id}=${text}`)
    }
  }
  return { der: name.der, text: parts.join(', '), ...(commonName !== undefined ? { commonName } : {}) }
}

function time({ tag, content }: Tlv): Date {
  const text = String.fromCharCode(...content)
  const match =
    tag === UTC_TIME
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
      : tag === GENERALIZED_TIME
        ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
        : null
  if (!match) throw new CertificateFormatError(`a validity time that is not UTCTime or GeneralizedTime: ${text}`)
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, ...number[]]
  // RFC 5280 4.1.2.5.1: a two-digit year 50–99 is 19YY.
  const fullYear = tag === UTC_TIME ? (year >= 50 ? 1900 + year : 2000 + year) : year
  return new Date(Date.UTC(fullYear, month! - 1, day, hour, minute, second))
}

/** The certificate in `der`, exactly: anything before or after one certificate is refused. */
export function readCertificate(der: Uint8Array): CertificateFields {
  const outer = expect(readTlv(der, 0), SEQUENCE, 'the certificate')
  if (outer.der.length !== der.length) throw new CertificateFormatError('bytes follow the certificate')
  const [tbs, signatureAlgorithm, signature] = readAll(outer.content)
  const tbsFields = readAll(expect(tbs, SEQUENCE, 'the signed part').content)
  // The version is an explicit [0]; without it the certificate is v1.
  const fields = tbsFields[0]?.tag === 0xa0 ? tbsFields.slice(1) : tbsFields
  const [serial, , issuer, validity, subject, spki] = fields
  const [notBefore, notAfter] = readAll(expect(validity, SEQUENCE, 'the validity').content)
  const [keyAlgorithm] = readAll(expect(spki, SEQUENCE, 'the public key').content)
  const [keyOid, keyParameter] = readAll(expect(keyAlgorithm, SEQUENCE, "the key's algorithm").content)
  const signatureBits = expect(signature, BIT_STRING, 'the signature')
  if (!notBefore || !notAfter) throw new CertificateFormatError('the validity lacks a time')
  return {
    der,
    signed: tbs!.der,
    serial: bytesToHex(expect(serial, INTEGER, 'the serial number').content),
    issuer: distinguishedName(expect(issuer, SEQUENCE, 'the issuer')),
    subject: distinguishedName(expect(subject, SEQUENCE, 'the subject')),
    notBefore: time(notBefore),
    notAfter: time(notAfter),
    spki: spki!.der,
    keyAlgorithm: oid(expect(keyOid, OID, "the key's algorithm").content),
    ...(keyParameter?.tag === OID ? { keyCurve: oid(keyParameter.content) } : {}),
    signatureAlgorithm: oid(
      expect(readAll(expect(signatureAlgorithm, SEQUENCE, 'the signature algorithm').content)[0], OID, 'its OID')
        .content,
    ),
    signature: signatureBits.content.subarray(1),
  }
}

/**
 * An ECDSA signature's DER (SEQUENCE of r and s) as r || s of `size` bytes each (IEEE P1363), as Web Crypto
 * verifies it; undefined when it is not one.
 */
export function ecdsaSignatureBytes(der: Uint8Array, size: number): Uint8Array | undefined {
  try {
    const sequence = readTlv(der, 0)
    const parts = readAll(sequence.content)
    if (sequence.tag !== SEQUENCE || sequence.der.length !== der.length || parts.length !== 2) return undefined
    const out = new Uint8Array(2 * size)
    for (const [i, part] of parts.entries()) {
      if (part.tag !== INTEGER) return undefined
      let digits = part.content
      while (digits.length > size && digits[0] === 0) digits = digits.subarray(1)
      if (digits.length > size) return undefined
      out.set(digits, (i + 1) * size - digits.length)
    }
    return out
  } catch {
    return undefined
  }
}
