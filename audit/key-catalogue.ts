// The key repository's metadata as the journal tells it: a plain reducer over the key records
// the keystore journals before each change (never key material: there is none in the journal).

import { isKeyType, keyMode, type KeyType, listedType, LogResult, LogType, restoredKeys } from '../protocol/index.js'

/** One key as `GET /api/keymgmt/list` shows it: its listed type (crypto-contract §1), and Unix seconds. */
export interface KeyMetadata {
  type: string
  created: number
  updated: number
}

export interface KeyRecordView {
  type: number
  result: number
  time: number
  decoded: Record<string, unknown> | undefined
}

export class MalformedKeyRecordError extends Error {
  override readonly name = 'MalformedKeyRecordError'
}

const KID = /^[0-9a-f]{32}$/

const KEY_CHANGES: ReadonlySet<number> = new Set([
  LogType.KEY_GENERATION,
  LogType.KEY_IMPORT,
  LogType.KEY_DERIVE,
  LogType.KEY_ATTRIBUTES_CHANGED,
  LogType.KEY_DELETE,
])

/**
 * The keystore journals a change, then makes it; should the change fail, a second record of the
 * same type with result ERROR says it did not happen, so the last change of each key is kept
 * until the next record to undo it. Records written before `at` was journaled fall back to the
 * record's time, and before `mode` to the type's default mode.
 */
export class KeyCatalogue {
  private readonly keys = new Map<string, KeyMetadata>()
  private readonly undo = new Map<string, { type: number; before: KeyMetadata | undefined }>()

  apply(record: KeyRecordView): void {
    const { type, result } = record
    if (type === LogType.RESTORE_KEYS && result === LogResult.OK) return this.restored(record)
    if (!KEY_CHANGES.has(type)) return
    const data = record.decoded ?? {}
    // A derive that failed is journaled under the same type, naming its source key or none: it changed no key.
    if (type === LogType.KEY_DERIVE && !isKeyType(data.type)) return
    const kid = typeof data.kid === 'string' && KID.test(data.kid) ? data.kid : undefined
    if (!kid) throw new MalformedKeyRecordError('the key record names no kid')
    if (result === LogResult.ERROR) return this.revert(kid, type)
    if (result !== LogResult.OK) return
    const before = this.keys.get(kid)
    const at = Number.isSafeInteger(data.at) ? (data.at as number) : record.time
    if (type === LogType.KEY_DELETE) this.keys.delete(kid)
    else if (type === LogType.KEY_ATTRIBUTES_CHANGED) {
      if (!before) throw new MalformedKeyRecordError(`key ${kid} changed, but it does not exist`)
      this.keys.set(kid, { ...before, updated: at })
    } else {
      if (!isKeyType(data.type)) throw new MalformedKeyRecordError('the key record names no key type')
      // Made on the device (created or derived): `ATT,PKEY,…`; imported: the public key alone.
      const listed = listedType(data.type, modeOf(data.type, data.mode), type !== LogType.KEY_IMPORT)
      this.keys.set(kid, { type: listed, created: at, updated: at })
    }
    this.undo.set(kid, { type, before })
  }

  /** The keys a restore stored (docs/backup.md), with the times and types they had on the source device. */
  private restored(record: KeyRecordView): void {
    const keys = restoredKeys(record.decoded)
    if (!keys) throw new MalformedKeyRecordError('the RESTORE_KEYS record is malformed')
    for (const { kid, type, mode, hasPrivate, created, updated } of keys) {
      this.keys.set(kid, { type: listedType(type, modeOf(type, mode), hasPrivate), created, updated })
      this.undo.delete(kid)
    }
  }

  /** A wipeout: every key is destroyed. */
  clear(): void {
    this.keys.clear()
    this.undo.clear()
  }

  /** By kid, in the order the keys were added. */
  entries(): Record<string, KeyMetadata> {
    return Object.fromEntries([...this.keys].map(([kid, key]) => [kid, { ...key }]))
  }

  private revert(kid: string, type: number): void {
    const last = this.undo.get(kid)
    if (last?.type !== type) return
    if (last.before) this.keys.set(kid, last.before)
    else this.keys.delete(kid)
    this.undo.delete(kid)
  }
}

/** The mode as the keystore journals it: only on SECP keys, spelled as `keyMode` spells it; absent is the default. */
function modeOf(type: KeyType, mode: unknown): ReturnType<typeof keyMode> {
  let read: ReturnType<typeof keyMode>
  try {
    read = keyMode(type, mode)
  } catch (err) {
    throw new MalformedKeyRecordError(`the key record's mode does not fit a ${type} key`, { cause: err })
  }
  if (mode !== undefined && read !== mode)
    throw new MalformedKeyRecordError(`the key record's mode does not fit a ${type} key`)
  return read
}
