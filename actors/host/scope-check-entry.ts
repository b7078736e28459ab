import { type CommandRequest, type JournalEntry, LogResult, LogType } from '../../protocol/index.js'
import { journalSubject } from './journal-subject.js'

/** FAILED_SCOPE_CHECK, result FAILED, source 403, with the token's scope (seed §5, §6). */
export function scopeCheckEntry(req: CommandRequest, extra: Record<string, unknown> = {}): JournalEntry {
  return {
    type: LogType.FAILED_SCOPE_CHECK,
    result: LogResult.FAILED,
    ...journalSubject(req.principal),
    data: { source: 403, scope: req.principal?.scope ?? '', rid: req.rid, ...extra },
  }
}
