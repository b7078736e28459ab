// The test suites' cache of passphrase keys.
import { createHash, randomBytes } from 'node:crypto'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { derivePassphraseKeyAsync, passphraseKeyFromSeed, type PassphraseKey } from '../../client/passphrase-key.js'

export interface PassphraseKeyCacheOptions {
  /** JSON file of derived seeds shared between test runs; absent = memory only. */
  file?: string
  /** Default derivePassphraseKeyAsync. */
  derive?(passphrase: string, eid: string): Promise<PassphraseKey>
}

/**
 * A TEST AID that spares test suites the PBKDF2 cost of the same (passphrase, eid) again.
 * Never use it on a real client: it keeps seeds (the private keys) in memory and, with `file`,
 * on disk next to an unsalted fast hash of the passphrase, which undoes the point of PBKDF2.
 */
export class PassphraseKeyCache {
  readonly #memory = new Map<string, Promise<PassphraseKey>>()
  readonly #file: string | undefined
  readonly #derive: (passphrase: string, eid: string) => Promise<PassphraseKey>

  constructor(options: PassphraseKeyCacheOptions = {}) {
    this.#file = options.file
    this.#derive = options.derive ?? derivePassphraseKeyAsync
  }

  get(passphrase: string, eid: string): Promise<PassphraseKey> {
    const id = createHash('sha256')
      .update(JSON.stringify([passphrase, eid]))
      .digest('hex')
    let key = this.#memory.get(id)
    if (!key) {
      key = this.#load(id, passphrase, eid)
      this.#memory.set(id, key)
      key.catch(() => this.#memory.delete(id))
    }
    return key
  }

  async #load(id: string, passphrase: string, eid: string): Promise<PassphraseKey> {
    const stored = this.#file === undefined ? {} : await readSeeds(this.#file)
    const hex = stored[id]
    if (typeof hex === 'string' && /^[0-9a-f]{64}$/.test(hex))
      return passphraseKeyFromSeed(new Uint8Array(Buffer.from(hex, 'hex')))
    const key = await this.#derive(passphrase, eid)
    if (this.#file !== undefined) {
      // Re-read so entries other processes added meanwhile survive; the rename keeps the file whole.
      const seeds = { ...(await readSeeds(this.#file)), [id]: Buffer.from(key.seed).toString('hex') }
      const tmp = `${this.#file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
      await writeFile(tmp, JSON.stringify(seeds), { mode: 0o600 })
      await rename(tmp, this.#file)
    }
    return key
  }
}

async function readSeeds(file: string): Promise<Record<string, unknown>> {
  try {
    const value: unknown = JSON.parse(await readFile(file, 'utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {}
  } catch (err) {
    // A missing or damaged cache is an empty one.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError) return {}
    throw err
  }
}
