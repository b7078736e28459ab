import type { PairingRecord, PairingStore } from './pairing-store.js'
import type { WebCryptoKey } from './webcrypto-keys.js'

/** The parts of IndexedDB this store uses, typed here: the authenticator compiles without the DOM's types too. */
interface IdbRequest<T> {
  result: T
  error: unknown
  onsuccess: (() => void) | null
  onerror: (() => void) | null
}
interface IdbOpenRequest extends IdbRequest<IdbDatabase> {
  onupgradeneeded: (() => void) | null
  onblocked: (() => void) | null
}
interface IdbObjectStore {
  getAll(): IdbRequest<unknown[]>
  put(value: unknown): IdbRequest<unknown>
  delete(key: string): IdbRequest<undefined>
}
interface IdbTransaction {
  objectStore(name: string): IdbObjectStore
  oncomplete: (() => void) | null
  onerror: (() => void) | null
  onabort: (() => void) | null
  error: unknown
}
interface IdbDatabase {
  objectStoreNames: { contains(name: string): boolean }
  createObjectStore(name: string, options: { keyPath: string }): unknown
  transaction(store: string, mode: 'readonly' | 'readwrite'): IdbTransaction
  close(): void
}
export interface IdbFactory {
  open(name: string, version: number): IdbOpenRequest
}

/** IndexedDB failed or refused: private browsing without storage, a quota, a database of a newer version. */
export class PairingDatabaseError extends Error {
  override readonly name = 'PairingDatabaseError'
}

const STORE = 'pairings'
const VERSION = 1

/**
 * The web page's pairings, each with its non-extractable X25519 CryptoKey, in one IndexedDB database of the page's
 * origin: a CryptoKey is structured-cloneable, so the key itself is stored, never its bytes (which the browser does
 * not give out). Nothing goes to localStorage or cookies.
 */
export class IndexedDbPairingStore implements PairingStore<WebCryptoKey> {
  private constructor(private readonly db: IdbDatabase) {}

  static open(name: string, factory: IdbFactory = browserIndexedDb()): Promise<IndexedDbPairingStore> {
    return new Promise((resolve, reject) => {
      const request = factory.open(name, VERSION)
      request.onupgradeneeded = () => {
        if (!request.result.objectStoreNames.contains(STORE))
          request.result.createObjectStore(STORE, { keyPath: 'pid' })
      }
      request.onsuccess = () => resolve(new IndexedDbPairingStore(request.result))
      request.onerror = () =>
        reject(new PairingDatabaseError(`cannot open the database ${name}`, { cause: request.error }))
      request.onblocked = () => reject(new PairingDatabaseError(`the database ${name} is held open by another tab`))
    })
  }

  async list(): Promise<PairingRecord<WebCryptoKey>[]> {
    return (await this.run('readonly', (store) => store.getAll())) as PairingRecord<WebCryptoKey>[]
  }

  async add(pairing: PairingRecord<WebCryptoKey>): Promise<void> {
    await this.run('readwrite', (store) => store.put(pairing))
  }

  async remove(pid: string): Promise<void> {
    await this.run('readwrite', (store) => store.delete(pid))
  }

  close(): void {
    this.db.close()
  }

  /** One request in a transaction of its own, resolved once the transaction has committed. */
  private run<T>(mode: 'readonly' | 'readwrite', act: (store: IdbObjectStore) => IdbRequest<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      const transaction = this.db.transaction(STORE, mode)
      const request = act(transaction.objectStore(STORE))
      const failed = () =>
        reject(
          new PairingDatabaseError(`the pairing database refused a ${mode} transaction`, { cause: transaction.error }),
        )
      transaction.oncomplete = () => resolve(request.result)
      transaction.onerror = failed
      transaction.onabort = failed
    })
  }
}

function browserIndexedDb(): IdbFactory {
  const factory = (globalThis as { indexedDB?: IdbFactory }).indexedDB
  if (!factory) throw new PairingDatabaseError('this browser has no IndexedDB')
  return factory
}
