// The key repository's metadata as the journal tells it: a plain reducer over the key records
// the keystore journals before each change (never key material: there is none in the journal).

import { isKeyType, keyMode, type KeyType, listedType, LogResult, LogType } from '../protocol/index.js'

/** One key as `GET /api/keymgmt/list` shows it: its listed type, and Unix seconds. */
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
    if (
      type !== LogType.KEY_GENERATION &&
      type !== LogType.KEY_IMPORT &&
      type !== LogType.KEY_ATTRIBUTES_CHANGED &&
      type !== LogType.KEY_DELETE
    )
      return
    const data = record.decoded ?? {}
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
      const listed = listedType(data.type, modeOf(data.type, data.mode), type === LogType.KEY_GENERATION)
      this.keys.set(kid, { type: listed, created: at, updated: at })
    }
    this.undo.set(kid, { type, before })
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

function modeOf(type: KeyType, mode: unknown): ReturnType<typeof keyMode> {
  try {
    return keyMode(type, mode)
  } catch (err) {
    throw new MalformedKeyRecordError(`the key record's mode does not fit a ${type} key`, { cause: err })
  }
}
