import { createCipheriv, createDecipheriv } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { HalError, UnsealError } from '../errors.js'
import type { EntropySource } from '../types.js'
import { writeFileOnce } from './atomic-file.js'
import { errorCode } from './error-code.js'

const NONCE = 12
const TAG = 16

/**
 * The enclave's key for data at rest (the key repository): AES-256-GCM, created on first use
 * and read only by the process that seals or unseals, so that with `--split` only the key
 * store's process ever holds it. Sealed form: nonce (12) || ciphertext || tag (16).
 */
export class SealingKey {
  #key: Promise<Buffer> | undefined

  constructor(
    private readonly path: string,
    private readonly entropy: EntropySource,
  ) {}

  async seal(plaintext: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
    const key = await this.load()
    const nonce = Buffer.from(this.entropy.read(NONCE))
    const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(aad)
    return Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()])
  }

  async unseal(sealed: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
    if (sealed.length < NONCE + TAG) throw new UnsealError('the sealed data is truncated')
    const key = await this.load()
    const bytes = Buffer.from(sealed)
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE))
      .setAAD(aad)
      .setAuthTag(bytes.subarray(bytes.length - TAG))
    try {
      return Buffer.concat([decipher.update(bytes.subarray(NONCE, bytes.length - TAG)), decipher.final()])
    } catch {
      throw new UnsealError('the sealed data was altered, or sealed by another enclave')
    }
  }

  private load(): Promise<Buffer> {
    this.#key ??= this.read().catch((err: unknown) => {
      this.#key = undefined
      throw err
    })
    return this.#key
  }

  private async read(): Promise<Buffer> {
    try {
      return checked(await readFile(this.path), this.path)
    } catch (err) {
      if (errorCode(err) !== 'ENOENT') throw err
    }
    try {
      await writeFileOnce(this.path, this.entropy.read(32), 0o600)
    } catch (err) {
      // Another process of the device made it a moment ago: use theirs.
      if (errorCode(err) !== 'EEXIST') throw err
    }
    return checked(await readFile(this.path), this.path)
  }
}

function checked(key: Buffer, path: string): Buffer {
  if (key.length !== 32) throw new HalError(`${path} is not a 32-byte sealing key`)
  return key
}
