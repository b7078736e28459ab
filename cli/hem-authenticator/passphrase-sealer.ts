import { createCipheriv, createDecipheriv, randomBytes, scrypt, type ScryptOptions } from 'node:crypto'
import type { Sealer } from '../../authenticator/index.js'

/** The store's key derivation, kept in the file so that a later version can raise it. */
export interface ScryptParams {
  name: 'scrypt'
  salt: string
  N: number
  r: number
  p: number
}

/** A passphrase that does not open the store, or a sealed value that was changed. */
export class SealedValueError extends Error {
  override readonly name = 'SealedValueError'
}

const KEY_LENGTH = 32
const IV_LENGTH = 12
const TAG_LENGTH = 16
/** Binds a sealed value to its use: an `aid_prv` of this store. */
const AAD = Buffer.from('hem-authenticator aid_prv v1')

/** scrypt with N = 2^15, r = 8 (32 MiB, about 0.1 s): a fresh salt per store. */
export function newScryptParams(): ScryptParams {
  return { name: 'scrypt', salt: randomBytes(16).toString('base64'), N: 2 ** 15, r: 8, p: 1 }
}

/** AES-256-GCM under a key derived from the passphrase: `b64(iv ‖ ciphertext ‖ tag)`. */
export async function passphraseSealer(passphrase: string, params: ScryptParams): Promise<Sealer> {
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r }
  const key = await new Promise<Buffer>((resolve, reject) =>
    scrypt(passphrase.normalize('NFC'), Buffer.from(params.salt, 'base64'), KEY_LENGTH, options, (err, derived) =>
      err ? reject(err) : resolve(derived),
    ),
  )
  return keySealer(key)
}

/** A sealer under `key`: a random one keeps secrets sealed in memory for one process's life (the automatic mode). */
export function keySealer(key: Buffer = randomBytes(KEY_LENGTH)): Sealer {
  return {
    seal(secret) {
      const iv = randomBytes(IV_LENGTH)
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(AAD)
      const sealed = Buffer.concat([iv, cipher.update(secret), cipher.final(), cipher.getAuthTag()])
      return Promise.resolve(sealed.toString('base64'))
    },
    open(text) {
      const sealed = Buffer.from(text, 'base64')
      if (sealed.length < IV_LENGTH + TAG_LENGTH) return Promise.reject(new SealedValueError('a sealed value is cut'))
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_LENGTH)).setAAD(AAD)
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_LENGTH))
      try {
        const head = decipher.update(sealed.subarray(IV_LENGTH, sealed.length - TAG_LENGTH))
        const tail = decipher.final()
        // Not Buffer.concat: its result may sit in Node's shared pool, which outlives this key.
        const secret = new Uint8Array(head.length + tail.length)
        secret.set(head)
        secret.set(tail, head.length)
        head.fill(0)
        return Promise.resolve(secret)
      } catch (err) {
        return Promise.reject(new SealedValueError('the passphrase does not open the store', { cause: err }))
      }
    },
  }
}
