import { type JournalEntry, LogResult, LogType } from '../../protocol/index.js'

/** The CONFIG_UPDATED record of request `rid`, answered with status `source`: OK for a 200, FAILED otherwise. */
export function configUpdated(
  source: number,
  rid: string,
  data: Record<string, unknown> = {},
  subject: { subject?: string } = {},
): JournalEntry {
  const result = source === 200 ? LogResult.OK : LogResult.FAILED
  return { type: LogType.CONFIG_UPDATED, result, ...subject, data: { source, rid, ...data } }
}
