// Downloads a device's journal through its API (GET /api/logger/key, /list[/:offset], /:id),
// byte for byte, for the offline tools. The token in the options needs the scope logger:get.

import { deviceDownload, deviceRequest, type DeviceHttpOptions } from '../client/device-http.js'
import { DeviceRefusedError } from '../client/owner.js'
import type { JournalFile } from './verify-journal.js'

/** The device answered, but not with what a journal download needs. */
export class FetchJournalError extends Error {
  override readonly name = 'FetchJournalError'
}

const FILE_ID = /^[0-9a-f]{8}$/
const BASE64 = /^[A-Za-z0-9+/]{43}=$/
/** More than any device keeps: a list claiming more is not believed. */
const MAX_FILES = 1 << 20

/** The log public key (`o.token` needs the scope logger:get). */
export async function fetchLogKey(base: string, o: DeviceHttpOptions): Promise<Uint8Array> {
  const key = await deviceRequest(`${base}/api/logger/key`, 'GET', undefined, o)
  if (key.status !== 200) throw new DeviceRefusedError(key.status, key.body, 'GET /api/logger/key')
  const text: unknown = key.body?.key
  if (typeof text !== 'string' || !BASE64.test(text)) throw new FetchJournalError('the device sent no Ed25519 log key')
  return new Uint8Array(Buffer.from(text, 'base64'))
}

/**
 * Every log file, oldest first, as stored. An E device serves neither the list nor the files
 * (404 there): that is a FetchJournalError naming it.
 */
export async function fetchLogFiles(base: string, o: DeviceHttpOptions): Promise<JournalFile[]> {
  const files: JournalFile[] = []
  for (const id of await listFiles(base, o)) {
    const answer = await deviceDownload(`${base}/api/logger/${id}`, 'GET', undefined, o)
    if (answer.status !== 200) throw new DeviceRefusedError(answer.status, undefined, `GET /api/logger/${id}`)
    files.push({ id, bytes: new Uint8Array(answer.bytes) })
  }
  return files
}

async function listFiles(base: string, o: DeviceHttpOptions): Promise<string[]> {
  const ids: string[] = []
  for (;;) {
    const page = await deviceRequest(`${base}/api/logger/list/${ids.length}`, 'GET', undefined, o)
    if (page.status === 404 && ids.length === 0) throw new FetchJournalError('the device lists no log files: an E device serves only its log key, not its files')
    if (page.status !== 200) throw new DeviceRefusedError(page.status, page.body, `GET /api/logger/list/${ids.length}`)
    const { total, id } = (page.body ?? {}) as { total?: unknown; id?: unknown }
    if (!Number.isSafeInteger(total) || (total as number) > MAX_FILES || !Array.isArray(id) || id.length === 0 || !id.every((x) => typeof x === 'string' && FILE_ID.test(x))) {
      throw new FetchJournalError('the device sent a malformed log list')
    }
    ids.push(...(id as string[]))
    if (ids.length >= (total as number)) return [...new Set(ids)]
  }
}
