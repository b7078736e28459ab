// A client that logs in for every request (a script, the app's scope-per-screen tokens) would bury
// everything else in a timeline: its logins of one scope in one minute read as one line.
import { isFailedLogin, isLogin, type TimelineEvent } from './timeline.js'

/** A timeline line: one event, or `count` logins folded into one (`first` the oldest, the line itself the newest). */
export interface TimelineLine extends TimelineEvent {
  count: number
  first?: Pick<TimelineEvent, 'file' | 'seq' | 'time' | 'iso'>
}

/**
 * Folds logins (passphrase or external, allowed or refused) of the same who, scope, result and status within one
 * minute of the device's clock into one line, placed where the newest of them is; every other event stays a line
 * of its own. `events` oldest first, as `timeline` gives them; so is the result. A refused login's record may
 * count several refusals already (`count`): a folded line sums them.
 */
export function foldLogins(events: TimelineEvent[]): TimelineLine[] {
  const folded: TimelineLine[] = []
  const open = new Map<string, TimelineLine>()
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!
    const count = attempts(event)
    if (!isLogin(event)) {
      folded.push({ ...event, count })
      continue
    }
    const key = JSON.stringify([
      event.type,
      isFailedLogin(event) ? '' : event.subject,
      event.facts.scope ?? '',
      event.result,
      event.status ?? 0,
      Math.floor(event.time / 60),
    ])
    const line = open.get(key)
    if (line) {
      line.count += count
      line.first = { file: event.file, seq: event.seq, time: event.time, iso: event.iso }
    } else {
      const made: TimelineLine = { ...event, count }
      open.set(key, made)
      folded.push(made)
    }
  }
  return folded.reverse()
}

function attempts(event: TimelineEvent): number {
  const { count } = event.facts
  return isFailedLogin(event) && typeof count === 'number' && Number.isSafeInteger(count) && count > 0 ? count : 1
}
