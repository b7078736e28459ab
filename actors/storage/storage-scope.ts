// Any disk number passes here: one the device lacks is the storage service's 406 (contract §3).
const STORAGE_SCOPE = /^storage:disk(0|[1-9]\d{0,2})(:rw)?$/

/**
 * The disk and the write permission a `storage:disk<N>[:rw]` scope names (seed §3: the disk and
 * the mode come from the token scope only), or undefined for a scope that names no disk.
 */
export function storageScope(scope: string): { disk: number; rw: boolean } | undefined {
  const match = STORAGE_SCOPE.exec(scope)
  return match ? { disk: Number(match[1]), rw: match[2] !== undefined } : undefined
}
