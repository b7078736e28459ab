import type { KV } from '@nats-io/kv'
import { isWrongRevision, retryTransient } from '../resilient-kv.js'

export interface Versioned<T> {
  value: T
  /** The KV revision the value was read at: an update names it, so that of two racing writers one loses. */
  revision: number
}

/** A KV bucket of JSON values, with compare-and-set writes. */
export class JsonBucket<T> {
  constructor(private readonly kv: () => Promise<KV>) {}

  async get(key: string): Promise<Versioned<T> | undefined> {
    const entry = await (await this.kv()).get(key)
    if (!entry || entry.operation !== 'PUT') return undefined
    return { value: entry.json<T>(), revision: entry.revision }
  }

  /** Writes `value` when `key` holds none; false when it does (or another writer made it first). */
  async create(key: string, value: T): Promise<boolean> {
    return this.guarded(async (kv) => kv.create(key, JSON.stringify(value)))
  }

  /** Writes `value` when `key` is still at `revision`; false when another writer changed it since. */
  async update(key: string, value: T, revision: number): Promise<boolean> {
    return this.guarded(async (kv) => kv.update(key, JSON.stringify(value), revision))
  }

  async put(key: string, value: T): Promise<void> {
    await (await this.kv()).put(key, JSON.stringify(value))
  }

  async remove(key: string): Promise<void> {
    await (await this.kv()).purge(key)
  }

  /** The live keys matching the subject filter (`*` one token, `>` the rest); listed again whole after a lost node. */
  async keys(filter = '>'): Promise<string[]> {
    const kv = await this.kv()
    return retryTransient(async () => {
      const keys: string[] = []
      for await (const key of await kv.keys(filter)) keys.push(key)
      return keys
    })
  }

  private async guarded(write: (kv: KV) => Promise<number>): Promise<boolean> {
    const kv = await this.kv()
    try {
      await write(kv)
      return true
    } catch (error) {
      // Another writer got there first (create on a live key, a stale update).
      if (isWrongRevision(error)) return false
      throw error
    }
  }
}
