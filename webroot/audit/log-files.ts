// The device's journal files through its API, under the scope logger:get only.
import { upToRecord } from '../../eventstore/browser.js'
import type { JournalFile } from '../../protocol/browser.js'
import type { DeviceSession } from '../device-session.js'
import { parseLogKey, type LogKey } from './log-key.js'

export const LOGGER_SCOPE = 'logger:get'

/** One page of GET /api/logger/list/<offset>: up to 128 ids, oldest first, and how many files there are. */
export interface LogFilePage {
  offset: number
  total: number
  ids: string[]
}

const FILE_ID = /^[0-9a-f]{8}$/

export async function listLogFiles(session: DeviceSession, offset: number): Promise<LogFilePage> {
  const answer = (await session.get(`/api/logger/list/${offset}`, LOGGER_SCOPE)) as { total?: unknown; id?: unknown }
  const ids = Array.isArray(answer?.id) ? answer.id.filter((id): id is string => FILE_ID.test(String(id))) : []
  const total = Number.isSafeInteger(answer?.total) ? (answer.total as number) : ids.length
  return { offset, total, ids }
}

/** One file as the device stores it. */
export function logFile(session: DeviceSession, id: string): Promise<Uint8Array> {
  return session.bytes(`/api/logger/${id}`, LOGGER_SCOPE)
}

/** What downloading the whole journal is doing, for the status line. */
export type DownloadProgress = (text: string) => void

/**
 * The log key and its signed head, then every file up to it (asked for in that order, so that the
 * files reach the head): the head's file cut right after the head's record, newer files left out,
 * as hem-audit fetch does. What the device writes after the head (this download's own records) no
 * signature covers yet.
 */
export async function downloadJournal(
  session: DeviceSession,
  progress: DownloadProgress,
): Promise<LogKey & { files: JournalFile[] }> {
  const key = parseLogKey(await session.get('/api/logger/key', LOGGER_SCOPE))
  const ids: string[] = []
  for (let page = await listLogFiles(session, 0); ; page = await listLogFiles(session, ids.length)) {
    ids.push(...page.ids)
    if (page.ids.length === 0 || ids.length >= page.total) break
  }
  const wanted = ids.filter((id) => id <= key.head.file)
  const files: JournalFile[] = []
  for (const id of wanted) {
    progress(`Downloading log file ${files.length + 1} of ${wanted.length} (${id})…`)
    const file = { id, bytes: await logFile(session, id) }
    files.push(id === key.head.file ? upToRecord(file, key.head.seq) : file)
  }
  return { ...key, files }
}
