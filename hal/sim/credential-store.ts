import { rm } from 'node:fs/promises'
import { dirname } from 'node:path'
import { HalError } from '../errors.js'
import type { LoginCredentials } from '../types.js'
import { syncDirectory, writeFileAtomic } from './atomic-file.js'
import { readOptionalEnclaveFile } from './enclave-files.js'

/** The login public keys, in one JSON file of the enclave: `{"user": b64, "master": b64, "salt"?: eid}`. */
export class CredentialStore {
  #credentials: LoginCredentials | undefined

  private constructor(
    readonly path: string,
    credentials: LoginCredentials | undefined,
  ) {
    this.#credentials = credentials
  }

  static async load(path: string): Promise<CredentialStore> {
    return new CredentialStore(path, await readOptionalEnclaveFile(path, parseCredentials))
  }

  get(): LoginCredentials | undefined {
    return this.#credentials
  }

  async set({ user, master, salt }: LoginCredentials): Promise<void> {
    if (user.length !== 32 || master.length !== 32) throw new HalError('login keys are 32-byte X25519 public keys')
    if (salt !== undefined && !isSalt(salt)) throw new HalError('the salt is an eid: base64 of 32 bytes')
    const b64 = (key: Uint8Array) => Buffer.from(key).toString('base64')
    const stored = { user: b64(user), master: b64(master), ...(salt !== undefined ? { salt } : {}) }
    await writeFileAtomic(this.path, `${JSON.stringify(stored)}\n`, 0o600)
    this.#credentials = { user: Uint8Array.from(user), master: Uint8Array.from(master), ...(salt ? { salt } : {}) }
  }

  async clear(): Promise<void> {
    await rm(this.path, { force: true })
    await syncDirectory(dirname(this.path))
    this.#credentials = undefined
  }
}

/** An eid as the API shows it: standard base64 of a 32-byte key. */
function isSalt(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9+/]{43}=$/.test(value)
}

function parseCredentials(text: string): LoginCredentials {
  const { user, master, salt } = JSON.parse(text) as Record<string, unknown>
  if (salt !== undefined && !isSalt(salt)) throw new Error('the salt is not an eid')
  const key = (value: unknown) => {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.alloc(0)
    if (bytes.length !== 32) throw new Error('a login key is not 32 bytes of base64')
    return new Uint8Array(bytes)
  }
  return { user: key(user), master: key(master), ...(isSalt(salt) ? { salt } : {}) }
}
