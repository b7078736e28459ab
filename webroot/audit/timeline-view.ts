// The journal's story on screen: one line per record, newest first, in words (when, who, what,
// result), filtered by type, result and subject; failures marked by a class and the word itself.
import { timeline, whoWord, type TimelineEvent, type TimelineRecord } from '../../audit/browser.js'
import { logTypePhrase } from '../../protocol/browser.js'
import { field, h, select } from '../dom.js'
import { unixTimeWords } from '../views/time-words.js'

/** Lines shown at once: enough for a sitting, few enough for a phone; the filters narrow the rest. */
const SHOWN = 500
const ANY = ''
const RESULTS = ['OK', 'FAILED', 'ERROR'] as const

function subjectLabel(subject: string): string {
  return subject === 'U' || subject === 'M' ? `${whoWord(subject)} (${subject})` : whoWord(subject)
}

function eventLine(event: TimelineEvent) {
  const failed = event.result !== 'OK'
  const result = event.status === undefined ? event.result : `${event.result} ${event.status}`
  const facts = Object.entries(event.facts)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ')
  return h(
    'li',
    { class: failed ? 'event failed' : 'event' },
    h('time', { datetime: event.iso }, unixTimeWords(event.time)),
    h('span', { class: 'who' }, whoWord(event.subject)),
    h('span', { class: 'what' }, event.what),
    failed ? h('strong', { class: 'result' }, result) : h('span', { class: 'result' }, result),
    facts && h('span', { class: 'facts' }, facts),
    h('span', { class: 'where' }, `${event.file}:${event.seq.toString(16)}`),
  )
}

/** The timeline of `records` (verified ones only) with its filters. */
export function timelinePanel(records: TimelineRecord[]) {
  const all = timeline(records)
  const types = [...new Set(all.map((e) => e.type))].sort((a, b) => a - b)
  const subjects = [...new Set(all.map((e) => e.subject))].sort()
  const type = select('type', [[ANY, 'All types'], ...types.map((t) => [String(t), logTypePhrase(t)] as const)])
  const result = select('result', [[ANY, 'All results'], ...RESULTS.map((r) => [r, r] as const)])
  const subject = select('subject', [[ANY, 'Everyone'], ...subjects.map((s) => [s, subjectLabel(s)] as const)])
  const count = h('p', { class: 'timeline-count' })
  const list = h('ol', { class: 'timeline', 'aria-label': 'Journal events, newest first' })

  const render = (): void => {
    const events = timeline(records, {
      ...(type.value === ANY ? {} : { types: [Number(type.value)] }),
      ...(subject.value === ANY ? {} : { subject: subject.value }),
    }).filter((e) => result.value === ANY || e.result === result.value)
    const failures = events.filter((e) => e.result !== 'OK').length
    const shown = events.slice(-SHOWN).reverse()
    count.textContent =
      `${events.length} of ${all.length} events, ${failures} failed or in error` +
      (shown.length < events.length ? `; the newest ${shown.length} shown: narrow the filters for older ones.` : '.')
    list.replaceChildren(...shown.map(eventLine))
  }
  for (const control of [type, result, subject]) control.addEventListener('change', render)
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
      field('Subject (who)', subject),
    ),
    count,
    list,
  )
}
