// Known answers: the encodings of the X25519 and X448 public keys of small order, with which every
// private key agrees on the all-zero secret (RFC 7748 §6.1, §6.2), and look-alikes that are not.
// RFC 7748 §5 decodes a u-coordinate little-endian, X25519 with bit 255 masked, and lets it be
// ≥ p (it is reduced): so 0 and 1 have a second encoding, p and p + 1, and X25519's every one a
// second with bit 255 set.

const hex = (text: string) => Uint8Array.from(Buffer.from(text, 'hex'))
const withTopBit = (bytes: Uint8Array) =>
  Uint8Array.from(bytes, (byte, i) => (i === bytes.length - 1 ? byte | 0x80 : byte))

/**
 * X25519 (p = 2^255 − 19): the seven values of libsodium's blocklist (`has_small_order`,
 * crypto_scalarmult/curve25519/ref10/x25519_ref10.c), which also ignores bit 255, and the first
 * seven of the twelve strings cr.yp.to/ecdh.html tells contributory protocols to reject; then
 * each with bit 255 set.
 */
const X25519_CANONICAL: [string, string][] = [
  ['u = 0', '0000000000000000000000000000000000000000000000000000000000000000'],
  ['u = 1', '0100000000000000000000000000000000000000000000000000000000000000'],
  ['a u of order 8', 'e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800'],
  ['the other u of order 8', '5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157'],
  ['u = p − 1', 'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'],
  ['u = p, i.e. 0', 'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'],
  ['u = p + 1, i.e. 1', 'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'],
]

export const SMALL_ORDER_X25519: [string, Uint8Array][] = [
  ...X25519_CANONICAL.map(([what, text]): [string, Uint8Array] => [what, hex(text)]),
  ...X25519_CANONICAL.map(([what, text]): [string, Uint8Array] => [`${what}, bit 255 set`, withTopBit(hex(text))]),
]

/**
 * X448 (p = 2^448 − 2^224 − 1, cofactor 4, no bit masked): u = 0, 1 and p − 1, and the only
 * values ≥ p a 56-byte string holds that reduce to one of them, p and p + 1.
 */
export const SMALL_ORDER_X448: [string, Uint8Array][] = [
  ['u = 0', hex('00'.repeat(56))],
  ['u = 1', hex('01' + '00'.repeat(55))],
  ['u = p − 1', hex('fe' + 'ff'.repeat(27) + 'fe' + 'ff'.repeat(27))],
  ['u = p, i.e. 0', hex('ff'.repeat(28) + 'fe' + 'ff'.repeat(27))],
  ['u = p + 1, i.e. 1', hex('00'.repeat(28) + 'ff'.repeat(28))],
]

/**
 * Public keys of ordinary order that look like the ones above. The last five of cr.yp.to's list
 * are of small order only to a reader that reduces all 256 bits mod p; RFC 7748 masks bit 255
 * (as OpenSSL and noble do), which leaves each an ordinary point.
 */
export const NOT_SMALL_ORDER: { CURVE25519: [string, Uint8Array][]; CURVE448: [string, Uint8Array][] } = {
  CURVE25519: [
    ['u = 2', hex('02' + '00'.repeat(31))],
    ['u = p + 2, i.e. 2', hex('efffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f')],
    ['p + an order-8 u, masked', hex('cdeb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b880')],
    ['p + the other order-8 u, masked', hex('4c9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f11d7')],
    ['2p − 1, masked', hex('d9' + 'ff'.repeat(31))],
    ['2p, masked', hex('da' + 'ff'.repeat(31))],
    ['2p + 1, masked', hex('db' + 'ff'.repeat(31))],
  ],
  CURVE448: [
    ['u = 2', hex('02' + '00'.repeat(55))],
    ['u = p + 2, i.e. 2', hex('01' + '00'.repeat(27) + 'ff'.repeat(28))],
    ['u = p − 2', hex('fd' + 'ff'.repeat(27) + 'fe' + 'ff'.repeat(27))],
  ],
}

export const SMALL_ORDER = { CURVE25519: SMALL_ORDER_X25519, CURVE448: SMALL_ORDER_X448 } as const
