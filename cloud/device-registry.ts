import type { KV } from '@nats-io/kv'
import type { CheckinAction } from '../protocol/index.js'
import { isWrongRevision } from './resilient-kv.js'
import type { CloudState } from './types.js'

/** What the cloud knows of a device (ext-auth contract §3.2), by devid. */
export interface DeviceRecord {
  /** b64 Ed25519 log public key, pinned on first sight: every later statement must be signed by it. */
  eid_sign?: string
  /** b64 X25519 identity key, the latest one the device stated. */
  eid?: string
  /** Unix seconds of the last check-in. */
  last_checkin?: number
  /** The operator's order for the device's next check-in. */
  policy?: CheckinAction
}

export const DEVID = /^[0-9a-f]{16}$/

/** A change lost to another writer too often in a row: the bucket is too busy or broken. */
export class RegistryConflictError extends Error {
  override readonly name = 'RegistryConflictError'
}

/** The device registry: one KV entry per devid, changed by compare-and-set only: instances never undo each other. */
export class DeviceRegistry {
  private constructor(private readonly kv: KV) {}

  static async open(state: CloudState): Promise<DeviceRegistry> {
    return new DeviceRegistry(await state.bucket('devices'))
  }

  async get(devid: string): Promise<DeviceRecord | undefined> {
    return (await this.read(devid))?.record
  }

  /**
   * Applies `change` to the current record (undefined when none) and stores what it returns; undefined from
   * `change` leaves the record as it is. Retried when another instance wrote in between.
   */
  async update(
    devid: string,
    change: (record: DeviceRecord | undefined) => DeviceRecord | undefined,
  ): Promise<DeviceRecord | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.read(devid)
      const next = change(current?.record)
      if (!next) return current?.record
      const bytes = new TextEncoder().encode(JSON.stringify(next))
      try {
        if (current) await this.kv.update(devid, bytes, current.revision)
        else await this.kv.create(devid, bytes)
        return next
      } catch (err) {
        if (!isWrongRevision(err)) throw err
      }
    }
    throw new RegistryConflictError(`the registry entry of ${devid} keeps changing under us`)
  }

  private async read(devid: string): Promise<{ record: DeviceRecord; revision: number } | undefined> {
    const entry = await this.kv.get(devid)
    if (!entry || entry.operation !== 'PUT') return entry ? { record: {}, revision: entry.revision } : undefined
    return { record: entry.json<DeviceRecord>(), revision: entry.revision }
  }
}
