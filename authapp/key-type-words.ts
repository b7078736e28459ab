// The type word of a `keymgmt:use` scope's key hint (ext-auth contract §1.4) in words: what kind of key the owner
// is asked to let someone use.

const ASYMMETRIC: Readonly<Record<number, string>> = {
  0x10: 'P-256',
  0x11: 'P-384',
  0x12: 'P-521',
  0x13: 'secp256k1',
  0x20: 'X25519',
  0x21: 'X448',
  0x22: 'Ed25519',
  0x23: 'Ed448',
}

const SYMMETRIC: Readonly<Record<number, string>> = {
  0x10: 'HMAC SHA2-256',
  0x11: 'HMAC SHA2-384',
  0x12: 'HMAC SHA2-512',
  0x13: 'HMAC SHA3-256',
  0x14: 'HMAC SHA3-384',
  0x15: 'HMAC SHA3-512',
  0x30: 'AES-128',
  0x31: 'AES-192',
  0x32: 'AES-256',
}

/** `8022` → "Ed25519 private key"; a word it cannot read → undefined (the page then names no type). */
export function keyTypeWords(typeWord: string): string | undefined {
  if (!/^[0-9a-f]{4}$/i.test(typeWord)) return undefined
  const word = parseInt(typeWord, 16)
  const low = word & 0xff
  if (!(word & 0x8000)) {
    const name = SYMMETRIC[low]
    return name === undefined ? undefined : `${name} key`
  }
  // Low byte 0: a type the family's app does not know (ML-KEM, ML-DSA).
  const name = ASYMMETRIC[low] ?? 'post-quantum'
  const half = word & 0x2000 ? 'private key' : 'public key'
  return `${name} ${half}`
}
