// The journal's record of a self-test (SELFTEST_PASSED): what its answer does not say, which
// known-answer tests and which entropy test failed. Read from the newest log file.
import { decodeRecordData, parseLine } from '../../eventstore/browser.js'
import { LogType } from '../../protocol/browser.js'
import type { DeviceSession } from '../device-session.js'

export const selfTestRecordScope = 'logger:get'

interface LogList {
  total: number
  id: string[]
}

export interface SelfTestFindings {
  /** The known-answer tests that failed, by name. */
  failed: string[]
  /** The entropy health test that failed, or 'ok'. */
  entropy?: string
  /** The crypto engine the tests ran on. */
  engine?: string
}

/** The data of the newest self-test record written at or after `since` (Unix seconds); undefined if none. */
export async function selfTestFindings(session: DeviceSession, since: number): Promise<SelfTestFindings | undefined> {
  let list = (await session.get('/api/logger/list', selfTestRecordScope)) as LogList
  // A page holds 128 ids, oldest first: the newest file is on the last page.
  if (list.total > list.id.length)
    list = (await session.get(`/api/logger/list/${list.total - 1}`, selfTestRecordScope)) as LogList
  const newest = list.id.at(-1)
  if (newest === undefined) return undefined
  const text = new TextDecoder().decode(await session.bytes(`/api/logger/${newest}`, selfTestRecordScope))
  for (const line of text.split('\n').reverse()) {
    const parsed = parseLine(line)
    if (!parsed.ok || parsed.record.type !== LogType.SELFTEST_PASSED || parsed.record.time < since) continue
    const data = decodeRecordData(parsed.record) ?? {}
    return {
      failed: Array.isArray(data.failed) ? data.failed.map(String) : [],
      ...(typeof data.entropy === 'string' ? { entropy: data.entropy } : {}),
      ...(typeof data.engine === 'string' ? { engine: data.engine } : {}),
    }
  }
  return undefined
}
