import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { UnsealError, type Sealer } from '../../hal/index.js'

/** Seals as the sim enclave does (AES-256-GCM, nonce first, tag last) under a key of its own. */
export function testSealer(): Sealer {
  const key = randomBytes(32)
  return {
    async seal(plaintext, aad) {
      const nonce = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(aad)
      return Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()])
    },
    async unseal(sealed, aad) {
      const bytes = Buffer.from(sealed)
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12))
          .setAAD(aad)
          .setAuthTag(bytes.subarray(bytes.length - 16))
        return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()])
      } catch {
        throw new UnsealError('does not open')
      }
    },
  }
}
