// The audit log: the device's journal files (paged, each downloadable), verified here in the
// browser with the log key exactly as hem-audit verify does, and told as a filterable timeline.
import { allKeys } from '../../client/browser.js'
import { journalRecords } from '../audit/journal-records.js'
import { checkPin, repin, type PinCheck } from '../audit/log-key-pin.js'
import { downloadJournal, listLogFiles, logFile, type LogFilePage } from '../audit/log-files.js'
import { problemWords } from '../audit/problem-words.js'
import { timelinePanel, type KeyLabels } from '../audit/timeline-view.js'
import { verifyJournalFiles } from '../audit/verify-journal-files.js'
import { deviceRequest } from '../device-session.js'
import { append, h, saveFile } from '../dom.js'
import type { AppContext, View } from '../view.js'
import { unixTimeWords } from './time-words.js'
import type { JournalFile, VerifyProblem, VerifyResult } from '../../protocol/browser.js'

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`

/** The paged list of log files, each with its download. */
function filesPanel(ctx: AppContext, first: LogFilePage) {
  const rows = h('tbody')
  const range = h('p', { class: 'files-range' })
  const earlier = h('button', { type: 'button' }, 'Earlier files')
  const later = h('button', { type: 'button' }, 'Later files')
  let page = first

  const download = (id: string) =>
    ctx.feedback.run(`Downloading log file ${id}…`, async () => {
      const bytes = await logFile(ctx.session, id)
      saveFile(`${id}.log`, bytes, 'text/plain')
      return `Downloaded log file ${id} (${plural(bytes.length, 'byte')}).`
    })

  const render = (): void => {
    rows.replaceChildren(
      ...page.ids.map((id) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row', class: 'mono' }, id),
          // A file's id is the Unix second it was opened at (or one more than the file before it).
          h('td', {}, unixTimeWords(parseInt(id, 16))),
          h(
            'td',
            {},
            h(
              'button',
              { type: 'button', 'aria-label': `Download ${id}`, onclick: () => void download(id) },
              'Download',
            ),
          ),
        ),
      ),
    )
    range.textContent =
      page.ids.length === 0
        ? 'The device lists no log files.'
        : `Files ${page.offset + 1} to ${page.offset + page.ids.length} of ${page.total}, oldest first.`
    earlier.disabled = page.offset === 0
    later.disabled = page.offset + page.ids.length >= page.total
  }
  const turn = (offset: number) =>
    ctx.feedback.run('Reading the list of log files…', async () => {
      page = await listLogFiles(ctx.session, Math.max(0, offset))
      render()
    })
  earlier.addEventListener('click', () => void turn(page.offset - first.ids.length))
  later.addEventListener('click', () => void turn(page.offset + page.ids.length))
  render()

  return h(
    'section',
    { 'aria-labelledby': 'files-title' },
    h('h3', { id: 'files-title' }, 'Log files'),
    range,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { id: 'log-files' },
        h('caption', {}, 'Journal files, as the device stores them'),
        h('thead', {}, h('tr', {}, ...['File', 'Opened', 'Action'].map((col) => h('th', { scope: 'col' }, col)))),
        rows,
      ),
    ),
    h('div', { class: 'pager' }, earlier, later),
  )
}

/** What went wrong in one file, or that it verified. */
function fileResult(problems: VerifyProblem[], records: number) {
  if (problems.length === 0) return h('td', {}, `verified, ${plural(records, 'record')}`)
  const more = problems.length > 1 ? ` (and ${plural(problems.length - 1, 'more problem')})` : ''
  return h('td', { class: 'failed' }, h('strong', {}, 'FAILED: '), `${problemWords(problems[0]!)}${more}`)
}

function verdictWords(result: VerifyResult, files: JournalFile[], head: { file: string; seq: number }): string {
  const { summary, problems } = result
  if (result.ok)
    return (
      `Verified: all ${plural(summary.files, 'file')}, ${plural(summary.records, 'record')} and ` +
      `${plural(summary.seals, 'seal')} check out with the log key, up to the signed head ` +
      `(file ${head.file}, record ${head.seq.toString(16)}; record numbers are hexadecimal, as the journal ` +
      'writes them).'
    )
  const bad = new Set(problems.map((p) => p.file)).size
  return (
    `FAILED: ${plural(problems.length, 'problem')} in ${plural(bad, 'file')} of ${files.length}. ` +
    `The first: ${problemWords(problems[0]!)}.`
  )
}

/** The labels the device lists for its keys now, to name the KIDs of the timeline; none where it lists none. */
async function keyLabels(ctx: AppContext): Promise<{ labels: KeyLabels; note?: string }> {
  if (!ctx.secure) return { labels: new Map(), note: 'Over plain HTTP the device lists no keys, so KIDs go unnamed.' }
  try {
    return { labels: new Map((await allKeys(ctx.session)).map((key) => [key.kid.toLowerCase(), key.label])) }
  } catch {
    return { labels: new Map(), note: 'The device did not list its keys, so KIDs go unnamed.' }
  }
}

/** Where the log key stands against the one pinned for this device in this browser, in words. */
function pinPanel(check: PinCheck): HTMLElement {
  const key = h('code', {}, check.key)
  switch (check.state) {
    case 'pinned':
      return h(
        'p',
        { class: 'pin' },
        `Log key pinned for device ${check.devid}: `,
        key,
        ". Compare it with the 'log key' line hemd printed at its start; every later verification in this " +
          'browser warns if the device shows another.',
      )
    case 'same':
      return h(
        'p',
        { class: 'pin' },
        `The log key is the one pinned for device ${check.devid} since ${unixTimeWords(check.pin.since)}: `,
        key,
        '.',
      )
    case 'unpinned':
      return h('p', { class: 'pin' }, `The log key (`, key, `) is not pinned: ${check.why}.`)
    case 'changed': {
      const panel = h(
        'div',
        { class: 'pin changed', role: 'alert' },
        h(
          'p',
          {},
          h('strong', {}, 'WARNING: the log key changed. '),
          `Device ${check.devid} signed its journal with another key when this browser pinned it ` +
            `(${unixTimeWords(check.pin.since)}). Pinned: `,
          h('code', {}, check.pin.key),
          '. Now: ',
          key,
          '. A wipeout or a new enclave gives a device a new log key; anything else means these files are not ' +
            "the journal you verified before. Compare the new key with hemd's 'log key' line before you trust it.",
        ),
      )
      const trust = h('button', { type: 'button' }, 'Pin the new key')
      trust.addEventListener('click', () => {
        if (repin(check.devid, check.key, Math.floor(Date.now() / 1000)))
          panel.replaceWith(h('p', { class: 'pin' }, `The new log key is pinned for device ${check.devid}.`))
      })
      panel.append(trust)
      return panel
    }
  }
}

/** Downloads the whole journal, verifies it here and shows the verdict, a result per file and the timeline. */
async function verifyAll(ctx: AppContext, out: HTMLElement): Promise<string> {
  out.replaceChildren()
  const { publicKey, head, files } = await downloadJournal(ctx.session, (text) => ctx.feedback.progress(text))
  const pin = checkPin(await deviceRequest('/api/system/checkin'), publicKey, Math.floor(Date.now() / 1000))
  const { labels, note } = await keyLabels(ctx)
  const result = await verifyJournalFiles(files, publicKey, { allowOpenTail: true, heads: [head] }, (done, total, id) =>
    ctx.feedback.progress(`Checking log file ${done} of ${total} (${id})…`),
  )
  const records = journalRecords(files)
  const verdict = verdictWords(result, files, head)
  const failed = new Set(result.problems.map((p) => p.file))
  const left = files.filter((f) => failed.has(f.id)).length
  const counts = new Map<string, number>()
  for (const r of records) counts.set(r.file, (counts.get(r.file) ?? 0) + 1)
  append(out, [
    h('p', { class: result.ok ? 'verdict verified' : 'verdict failed', id: 'verdict' }, verdict),
    pinPanel(pin),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { id: 'verified-files' },
        h('caption', {}, 'Result per file'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'File'), h('th', { scope: 'col' }, 'Result'))),
        h(
          'tbody',
          {},
          ...files.map((file) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row', class: 'mono' }, file.id),
              fileResult(
                result.problems.filter((p) => p.file === file.id),
                counts.get(file.id) ?? 0,
              ),
            ),
          ),
        ),
      ),
    ),
    left > 0 && h('p', {}, `The timeline leaves out the records of the ${plural(left, 'file')} that did not verify.`),
    note !== undefined && h('p', {}, note),
    timelinePanel(
      records.filter((r) => !failed.has(r.file)),
      labels,
    ),
  ])
  return `Verification done. ${verdict}`
}

export const auditView: View = {
  path: 'audit',
  title: 'Audit log',
  async show(root, ctx) {
    const first = await listLogFiles(ctx.session, 0)
    const out = h('div', { class: 'verification' })
    const verify = h(
      'button',
      { type: 'button', onclick: () => void ctx.feedback.run('Downloading the journal…', () => verifyAll(ctx, out)) },
      'Verify all files',
    )
    root.append(
      filesPanel(ctx, first),
      h(
        'section',
        { 'aria-labelledby': 'verify-title' },
        h('h3', { id: 'verify-title' }, 'Verification and timeline'),
        h(
          'p',
          {},
          "Downloads every file and checks it here, in this browser, with the device's log key: every line's " +
            'MAC, the signed file keys, the hash chain, the seals, the links between files and the signed head ' +
            'of the journal, as hem-audit verify does. Records the device writes after that head (this ' +
            "download's own among them) are left for the next verification.",
        ),
        verify,
        out,
      ),
    )
  },
}
