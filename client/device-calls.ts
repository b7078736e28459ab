// The calls on what the device holds besides keys: its disks (P), its audit log, its images.
import type { DeviceSession } from './device-session.js'
import { UnexpectedAnswerError } from './errors.js'
import { fileUpload } from './file-upload.js'
import type * as T from './types.js'
import { parseAnswer } from './wire.js'

const LOG_FILE_ID = /^[0-9a-f]{8}$/
/** More than any device keeps: a list claiming more is not believed. */
const MAX_LOG_FILES = 1 << 20

// ---- disks (P) ----

export async function unlockDisk(s: DeviceSession, disk: 0 | 1, mode: 'ro' | 'rw'): Promise<void> {
  await s.authorized(diskScope(disk, mode), 'GET', `/api/storage/unlock/${mode}`)
}

export async function lockDisk(s: DeviceSession, disk: 0 | 1): Promise<void> {
  await s.authorized(diskScope(disk, 'ro'), 'GET', '/api/storage/lock')
}

function diskScope(disk: 0 | 1, mode: 'ro' | 'rw'): string {
  if (disk !== 0 && disk !== 1) throw new RangeError('the device has Disk 0 and Disk 1')
  return `storage:disk${disk}${mode === 'rw' ? ':rw' : ''}`
}

// ---- the audit log ----

export const logKey = (s: DeviceSession) => s.authorizedJson<T.LogKey>('logger:get', 'GET', '/api/logger/key')

export async function logFiles(s: DeviceSession): Promise<string[]> {
  const ids: string[] = []
  for (;;) {
    // Past the last file: 404 (a device with a multiple of 128 files can list one page too far).
    const ok = ids.length === 0 ? [200] : [200, 404]
    const answer = await s.authorized('logger:get', 'GET', `/api/logger/list/${ids.length}`, {}, ok)
    if (answer.status === 404) return ids
    const { total, id } = (parseAnswer(answer.bytes) ?? {}) as { total?: unknown; id?: unknown }
    const wellFormed =
      Number.isSafeInteger(total) &&
      (total as number) <= MAX_LOG_FILES &&
      Array.isArray(id) &&
      id.length > 0 &&
      id.every((x) => typeof x === 'string' && LOG_FILE_ID.test(x))
    if (!wellFormed) throw new UnexpectedAnswerError('the device sent a malformed log list')
    ids.push(...(id as string[]))
    if (ids.length >= (total as number)) return [...new Set(ids)]
  }
}

export async function logFile(s: DeviceSession, id: string): Promise<Buffer> {
  if (!LOG_FILE_ID.test(id)) throw new RangeError(`${JSON.stringify(id)} is not a log file id (8 hex digits)`)
  return (await s.authorized('logger:get', 'GET', `/api/logger/${id}`)).bytes
}

// ---- upgrades ----

export async function upload(
  s: DeviceSession,
  kind: T.UpgradeKind,
  image: Uint8Array,
  onProgress?: (sent: number, total: number) => void,
): Promise<void> {
  const filename = kind === 'fw' ? 'firmware.bin' : 'webroot.tar'
  const path = `/api/system/upgrade/upload_${kind}`
  await s.openWhileFresh('system:upgrade', 'POST', path, fileUpload(image, filename, onProgress))
}

export async function check(s: DeviceSession, kind: T.UpgradeKind): Promise<T.CheckState> {
  const path = `/api/system/upgrade/check_${kind}`
  const { status } = await s.openWhileFresh('system:upgrade', 'GET', path, {}, [200, 201, 202])
  return status === 200 ? 'verified' : status === 201 ? 'started' : 'running'
}

export async function verify(
  s: DeviceSession,
  kind: T.UpgradeKind,
  o: { intervalMs?: number; onPoll?(state: T.CheckState): void },
): Promise<void> {
  for (let state = await check(s, kind); ; state = await check(s, kind)) {
    o.onPoll?.(state)
    if (state === 'verified') return
    await new Promise((resolve) => setTimeout(resolve, o.intervalMs ?? 250))
  }
}

export async function install(s: DeviceSession, kind: T.UpgradeKind, o: { allowDowngrade?: boolean }): Promise<void> {
  const path = `/api/system/upgrade/install_${kind}`
  if (o.allowDowngrade && kind === 'fw')
    await s.openWhileFresh('system:upgrade', 'POST', path, { json: { allow_downgrade: true } })
  else await s.openWhileFresh('system:upgrade', 'GET', path)
  if (kind === 'fw') s.forgetTokens()
}
