// The one DER encoder: the device certificate and certification requests, the public keys (SPKI,
// PKCS#8) of the key types, the signature KATs. Free of node, so that the management app bundles it.

export function tlv(tag: number, content: Uint8Array): Uint8Array {
  return concat([Uint8Array.of(tag), encodeLength(content.length), content])
}

export const sequence = (...items: Uint8Array[]): Uint8Array => tlv(0x30, concat(items))
export const set = (...items: Uint8Array[]): Uint8Array => tlv(0x31, concat(items))
export const booleanTrue = (): Uint8Array => tlv(0x01, Uint8Array.of(0xff))
/** `bytes` must already be the minimal two's-complement form. */
export const integer = (bytes: Uint8Array): Uint8Array => tlv(0x02, bytes)
export const bitString = (bytes: Uint8Array, unusedBits = 0): Uint8Array =>
  tlv(0x03, concat([Uint8Array.of(unusedBits), bytes]))
export const octetString = (bytes: Uint8Array): Uint8Array => tlv(0x04, bytes)
export const utf8String = (text: string): Uint8Array => tlv(0x0c, new TextEncoder().encode(text))
/** `text` must hold only PrintableString's characters (isPrintable). */
export const printableString = (text: string): Uint8Array => tlv(0x13, new TextEncoder().encode(text))
export const isPrintable = (text: string): boolean => /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(text)
export const explicit = (tagNumber: number, content: Uint8Array): Uint8Array => tlv(0xa0 | tagNumber, content)

/** SubjectPublicKeyInfo (RFC 5280): the AlgorithmIdentifier's OIDs (algorithm, then parameters), then the key. */
export function subjectPublicKeyInfo(oids: readonly string[], key: Uint8Array): Uint8Array {
  return sequence(sequence(...oids.map(objectIdentifier)), bitString(key))
}

/** A non-negative INTEGER of big-endian `bytes`: leading zeros dropped, a 0x00 put in front of a set top bit. */
export function unsignedInteger(bytes: Uint8Array): Uint8Array {
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0) start++
  const digits = bytes.subarray(start)
  return integer(digits[0]! >= 0x80 ? concat([Uint8Array.of(0), digits]) : digits)
}

export function objectIdentifier(dotted: string): Uint8Array {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number)
  const bytes: number[] = []
  for (const arc of [40 * first + second, ...rest]) {
    const base128 = [arc & 0x7f]
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128))
      base128.unshift((value & 0x7f) | 0x80)
    bytes.push(...base128)
  }
  return tlv(0x06, Uint8Array.from(bytes))
}

/** X.509 validity time: UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5). */
export function time(date: Date): Uint8Array {
  const iso = date.toISOString()
  const digits =
    `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}` +
    `${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`
  const ascii = (text: string) => new TextEncoder().encode(text)
  return date.getUTCFullYear() < 2050 ? tlv(0x17, ascii(digits.slice(2))) : tlv(0x18, ascii(digits))
}

function encodeLength(length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(length)
  const bytes: number[] = []
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff)
  return Uint8Array.from([0x80 | bytes.length, ...bytes])
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0
  for (const part of parts) length += part.length
  const out = new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}
