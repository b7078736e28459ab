// `genuine` signed and checked with node:crypto; its layout is genuine-format.ts (node-free, for the app too).
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { encodeGenuineClaims, type GenuineClaims, type GenuineStatement } from './genuine-format.js'

export { parseGenuine, type GenuineClaims, type GenuineKind, type GenuineStatement } from './genuine-format.js'

/** SHA-256 of the key's canonical SPKI DER (accepts any SPKI encoding of the same key). */
export function attestationKeyHash(spkiDer: Uint8Array): Uint8Array {
  const canonical = createPublicKey({ key: Buffer.from(spkiDer), format: 'der', type: 'spki' }).export({
    type: 'spki',
    format: 'der',
  })
  return new Uint8Array(createHash('sha256').update(canonical).digest())
}

export function signGenuine(claims: GenuineClaims, privateKey: KeyObject): Uint8Array {
  const signed = encodeGenuineClaims(claims)
  const signature = sign('sha256', signed, { key: privateKey, dsaEncoding: 'ieee-p1363' })
  return new Uint8Array(Buffer.concat([signed, signature]))
}

export function verifyGenuine(statement: GenuineStatement, publicKey: KeyObject): boolean {
  try {
    return verify('sha256', statement.signed, { key: publicKey, dsaEncoding: 'ieee-p1363' }, statement.signature)
  } catch {
    // A key type that cannot verify this way (Ed25519, say) verifies nothing.
    return false
  }
}
