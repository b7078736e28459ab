// foldLogins: logins of one who, scope, result and minute as one line at the newest's place; every
// other event untouched; refused logins' own counts summed.
import t from 'tap'
import { foldLogins } from '../audit/fold-logins.js'
import type { TimelineEvent } from '../audit/timeline.js'
import { LogType } from '../protocol/journal.js'

let seq = 0
function event(time: number, over: Partial<TimelineEvent> = {}): TimelineEvent {
  seq += 1
  return {
    time,
    iso: new Date(time * 1000).toISOString(),
    file: '6b0beb86',
    seq,
    type: LogType.AUTH_SUCCESS_INTERNAL,
    name: 'AUTH_SUCCESS_INTERNAL',
    what: 'login',
    subject: 'U',
    result: 'OK',
    status: 200,
    facts: { scope: 'keymgmt:list' },
    ...over,
  }
}

const shape = (lines: ReturnType<typeof foldLogins>) =>
  lines.map((l) => ({ seq: l.seq, count: l.count, first: l.first?.seq }))

t.test('one scope in one minute is one line, at its newest login', (t) => {
  const a = event(600)
  const other = event(610, { type: LogType.KEY_GENERATION, what: 'key generated', facts: {} })
  const b = event(620)
  const c = event(659)
  t.same(shape(foldLogins([a, other, b, c])), [
    { seq: other.seq, count: 1, first: undefined },
    { seq: c.seq, count: 3, first: a.seq },
  ])
  t.end()
})

t.test('another scope, who, result or minute is another line', (t) => {
  const lines = foldLogins([
    event(600),
    event(601, { facts: { scope: 'system:config' } }),
    event(602, { subject: 'M' }),
    event(603, { result: 'FAILED', status: 401, subject: '' }),
    event(660),
  ])
  t.equal(lines.length, 5)
  t.ok(lines.every((l) => l.count === 1 && l.first === undefined))
  t.end()
})

t.test('refused logins sum the refusals each record counts', (t) => {
  const refused = (time: number, count?: number) =>
    event(time, { result: 'FAILED', status: 401, subject: '', facts: { scope: 'x', ...(count ? { count } : {}) } })
  const lines = foldLogins([refused(600), refused(610, 12), refused(620)])
  t.same(
    shape(lines).map((l) => l.count),
    [14],
  )
  t.end()
})

t.test('external logins fold apart from passphrase ones', (t) => {
  const lines = foldLogins([event(600), event(601, { type: LogType.AUTH_SUCCESS_EXTERNAL, what: 'external login' })])
  t.equal(lines.length, 2)
  t.end()
})
