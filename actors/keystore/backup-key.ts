import { Packr } from 'msgpackr'
import { type KeystoreBlob, type Sealer, UnsealError } from '../../hal/index.js'
import { DEFAULT_SCRYPT, type ScryptParams, SerialQueue } from '../../protocol/index.js'
import { deriveBackupKey } from './backup-seal.js'

const packr = new Packr({ useRecords: false })
const SALT_BYTES = 32

/** The key backups are sealed under, with what derived it: a file's header carries `kdf` and `salt`. */
export interface BackupKey {
  kdf: ScryptParams
  salt: Uint8Array
  key: Uint8Array
}

/** The stored backup key does not open: altered, or another device's. */
export class BackupKeyUnreadableError extends Error {
  override readonly name = 'BackupKeyUnreadableError'
}

/**
 * The key derived from the owner's backup passphrase (never the passphrase), sealed by the enclave (purpose `backup`,
 * bound to the device) in the key store's own blob. Making a backup then needs no KDF run; a wipeout erases it.
 */
export class BackupKeyStore {
  readonly #queue = new SerialQueue()

  constructor(
    private readonly blob: KeystoreBlob,
    private readonly sealer: Sealer,
    private readonly devid: string,
  ) {}

  /** scrypt of the passphrase under a fresh salt with the default parameters: what `store` takes. */
  static async derive(passphrase: string, random: (n: number) => Uint8Array): Promise<BackupKey> {
    const salt = random(SALT_BYTES)
    return { kdf: { ...DEFAULT_SCRYPT }, salt, key: await deriveBackupKey(passphrase, salt, DEFAULT_SCRYPT) }
  }

  store(backupKey: BackupKey): Promise<void> {
    return this.#queue.run(async () => {
      const { kdf, salt, key } = backupKey
      const plaintext = Uint8Array.from(packr.pack({ ...kdf, salt, key }))
      try {
        await this.blob.write(await this.sealer.seal(plaintext, this.#aad()))
      } finally {
        plaintext.fill(0)
      }
    })
  }

  /** The stored key, or undefined when no passphrase was set; BackupKeyUnreadableError when it does not open. */
  async read(): Promise<BackupKey | undefined> {
    const sealed = await this.blob.read()
    if (!sealed) return undefined
    let plaintext: Uint8Array
    try {
      plaintext = await this.sealer.unseal(sealed, this.#aad())
    } catch (err) {
      if (err instanceof UnsealError) throw new BackupKeyUnreadableError('the stored backup key does not open')
      throw err
    }
    try {
      const { log2N, r, p, salt, key } = packr.unpack(plaintext) as Record<string, unknown>
      if (!(salt instanceof Uint8Array) || !(key instanceof Uint8Array) || key.length !== 32)
        throw new BackupKeyUnreadableError('the stored backup key is malformed')
      return { kdf: { log2N, r, p } as ScryptParams, salt: Uint8Array.from(salt), key: Uint8Array.from(key) }
    } finally {
      plaintext.fill(0)
    }
  }

  erase(): Promise<void> {
    return this.#queue.run(() => this.blob.erase())
  }

  #aad(): Uint8Array {
    return new TextEncoder().encode(`hemd backup key v1\0${this.devid}`)
  }
}
