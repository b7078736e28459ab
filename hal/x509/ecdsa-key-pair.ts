import { createPublicKey, webcrypto, type KeyObject } from 'node:crypto'

const P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const

/**
 * A WebCrypto view of a node P-256 private key, for @peculiar/x509
 * to sign with (Node 20 lacks KeyObject.toCryptoKey).
 */
export async function ecdsaKeyPair(privateKey: KeyObject): Promise<webcrypto.CryptoKeyPair> {
  const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'der' })
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' })
  return {
    privateKey: await webcrypto.subtle.importKey('pkcs8', pkcs8, P256, false, ['sign']),
    publicKey: await webcrypto.subtle.importKey('spki', spki, P256, true, ['verify']),
  }
}
