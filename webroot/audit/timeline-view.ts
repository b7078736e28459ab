// The journal's story on screen: one line per event, newest first, in words (when, who, what,
// result), logins of one scope and minute folded into one line, KIDs with the labels the device lists,
// filtered by type, result and who; failures marked by a class and the word itself.
import {
  eventWho,
  FAILED_LOGIN_WHO,
  foldLogins,
  isFailedLogin,
  timeline,
  whoWord,
  type TimelineEvent,
  type TimelineLine,
  type TimelineRecord,
} from '../../audit/browser.js'
import { logTypePhrase } from '../../protocol/browser.js'
import { field, h, select, type Child } from '../dom.js'
import { unixTimeWords } from '../views/time-words.js'

/** Lines shown at once: enough for a sitting, few enough for a phone; the filters narrow the rest. */
const SHOWN = 500
const ANY = ''
/** The who filter's value for refused logins; a subject's is `s:` and the subject (the device's is empty). */
const FAILED_LOGINS = 'failed-login'
const RESULTS = ['OK', 'FAILED', 'ERROR'] as const
const KID_FACTS = new Set(['kid', 'source_kid'])

/** KIDs (lowercase hex) to the labels the device lists now; a deleted key has none. */
export type KeyLabels = ReadonlyMap<string, string>

function whoKey(event: TimelineEvent): string {
  return isFailedLogin(event) ? FAILED_LOGINS : `s:${event.subject}`
}

function whoLabel(key: string): string {
  if (key === FAILED_LOGINS) return FAILED_LOGIN_WHO
  const subject = key.slice(2)
  return subject === 'U' || subject === 'M' ? `${whoWord(subject)} (${subject})` : whoWord(subject)
}

const place = (at: { file: string; seq: number }) => `${at.file}:${at.seq.toString(16)}`

function factNodes(event: TimelineEvent, labels: KeyLabels): Child[] {
  const nodes: Child[] = []
  for (const [key, value] of Object.entries(event.facts)) {
    if (key === 'count' && isFailedLogin(event)) continue
    if (nodes.length > 0) nodes.push(' ')
    nodes.push(`${key}=${value}`)
    const label = KID_FACTS.has(key) ? labels.get(String(value).toLowerCase()) : undefined
    if (label !== undefined) nodes.push(' ', h('q', { class: 'label' }, label))
  }
  return nodes
}

function eventLine(line: TimelineLine, labels: KeyLabels) {
  const failed = line.result !== 'OK'
  const result = line.status === undefined ? line.result : `${line.result} ${line.status}`
  const what = line.count > 1 ? `${line.what} ×${line.count}` : line.what
  const facts = factNodes(line, labels)
  const when =
    line.first && line.first.time !== line.time
      ? `${unixTimeWords(line.first.time)} to ${unixTimeWords(line.time).slice(11)}`
      : unixTimeWords(line.time)
  const where = line.first ? `${place(line.first)} to ${place(line)}` : place(line)
  return h(
    'li',
    { class: failed ? 'event failed' : 'event' },
    h('time', { datetime: line.iso }, when),
    h('span', { class: 'who' }, eventWho(line)),
    h('span', { class: 'what' }, what),
    failed ? h('strong', { class: 'result' }, result) : h('span', { class: 'result' }, result),
    facts.length > 0 && h('span', { class: 'facts' }, ...facts),
    h('span', { class: 'where' }, where),
  )
}

/** The timeline of `records` (verified ones only) with its filters; `labels` name the KIDs it shows. */
export function timelinePanel(records: TimelineRecord[], labels: KeyLabels) {
  const all = timeline(records)
  const types = [...new Set(all.map((e) => e.type))].sort((a, b) => a - b)
  const whos = [...new Set(all.map(whoKey))].sort()
  const type = select('type', [[ANY, 'All types'], ...types.map((t) => [String(t), logTypePhrase(t)] as const)])
  const result = select('result', [[ANY, 'All results'], ...RESULTS.map((r) => [r, r] as const)])
  const who = select('who', [[ANY, 'Everyone'], ...whos.map((key) => [key, whoLabel(key)] as const)])
  const count = h('p', { class: 'timeline-count' })
  const list = h('ol', { class: 'timeline', 'aria-label': 'Journal events, newest first' })

  const render = (): void => {
    const events = all.filter(
      (e) =>
        (type.value === ANY || e.type === Number(type.value)) &&
        (who.value === ANY || whoKey(e) === who.value) &&
        (result.value === ANY || e.result === result.value),
    )
    const lines = foldLogins(events)
    const failures = events.filter((e) => e.result !== 'OK').length
    const shown = lines.slice(-SHOWN).reverse()
    count.textContent =
      `${events.length} of ${all.length} events in ${lines.length} lines (logins of one scope in one minute ` +
      `are one line), ${failures} failed or in error` +
      (shown.length < lines.length
        ? `; the newest ${shown.length} lines shown: narrow the filters for older ones.`
        : '.')
    list.replaceChildren(...shown.map((line) => eventLine(line, labels)))
  }
  for (const control of [type, result, who]) control.addEventListener('change', render)
  render()

  return h(
    'section',
    { class: 'timeline-panel', 'aria-labelledby': 'timeline-title' },
    h('h3', { id: 'timeline-title' }, 'Timeline'),
    h(
      'fieldset',
      { class: 'timeline-filters' },
      h('legend', {}, 'Show only'),
      field('Type', type),
      field('Result', result),
      field('Who', who),
    ),
    count,
    h(
      'p',
      { class: 'hint' },
      'Each line ends with its place in the journal, file:record, both in hexadecimal as the journal writes ' +
        'them. Labels in quotes are the names the device gives those keys today.',
    ),
    list,
  )
}
