// What RESTORE_KEYS records say of each restored key (eventstore/FORMAT.md): enough for an auditor's replay to list
// the keys and put their lifecycles in service, never key material.

import { isKeyType, type KeyType } from './key-types.js'

/** `[kid, type, mode ('' for none), private (1: the device holds the secret), created, updated]`. */
export type RestoredKeyRow = [
  kid: string,
  type: string,
  mode: string,
  hasPrivate: 0 | 1,
  created: number,
  updated: number,
]

/** Rows per RESTORE_KEYS record: well inside a record's 16 KiB of data. */
export const RESTORED_KEYS_PER_RECORD = 96

export interface RestoredKey {
  kid: string
  type: KeyType
  mode: string | undefined
  hasPrivate: boolean
  created: number
  updated: number
}

const KID = /^[0-9a-f]{32}$/

/** The rows of a RESTORE_KEYS record's data, or undefined when any is malformed. */
export function restoredKeys(data: Record<string, unknown> | undefined): RestoredKey[] | undefined {
  const rows = data?.keys
  if (!Array.isArray(rows)) return undefined
  const keys: RestoredKey[] = []
  for (const row of rows as unknown[]) {
    if (!Array.isArray(row) || row.length !== 6) return undefined
    const [kid, type, mode, hasPrivate, created, updated] = row as unknown[]
    if (typeof kid !== 'string' || !KID.test(kid) || !isKeyType(type) || typeof mode !== 'string') return undefined
    if (!Number.isSafeInteger(created) || !Number.isSafeInteger(updated) || (hasPrivate !== 0 && hasPrivate !== 1))
      return undefined
    keys.push({
      kid,
      type,
      mode: mode === '' ? undefined : mode,
      hasPrivate: hasPrivate === 1,
      created: created as number,
      updated: updated as number,
    })
  }
  return keys
}
