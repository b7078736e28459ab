// The keys, a page at a time (the device gives at most 15), or those whose description matches a
// search; each row opens the key.
import { field, h, select } from '../../dom.js'
import { toBase64 } from '../../../client/browser.js'
import { checkAll, checkedField } from './checked-field.js'
import type { KeyEntry } from './key-details.js'
import { descrBytes, descrProblem, descrText, listedParts } from './key-text.js'
import type { KeysScreen } from './keys-screen.js'

export const PAGE = 15

interface KeyPage {
  offset: number
  total: number
  listed: number
  list: KeyEntry[]
}

const MATCHES = [
  ['any', 'contains'],
  ['prefix', 'starts with'],
  ['suffix', 'ends with'],
] as const

/** The search's `descr` pattern (crypto-contract: `^b64` prefix, `b64$` suffix, else a substring). */
function pattern(text: string, match: string): string {
  const b64 = toBase64(descrBytes(text))
  return match === 'prefix' ? `^${b64}` : match === 'suffix' ? `${b64}$` : b64
}

export interface KeyList {
  readonly element: HTMLElement
  /** Shows all keys again (no search) from `offset`, or the last page, which holds the newest key. */
  load(offset: number | 'last'): Promise<void>
  /** The offset of the page shown. */
  readonly offset: number
  /** The entry on the page shown, by KID. */
  entry(kid: string): KeyEntry | undefined
}

export function keyList(screen: KeysScreen): KeyList {
  let searching: string | undefined
  let offset = 0
  let shown: KeyEntry[] = []
  let total = 0
  const caption = h('caption', {}, 'Keys')
  const body = h('tbody')
  const range = h('p', { class: 'range', 'aria-live': 'polite' })
  const previous = h('button', { type: 'button', onclick: () => void move(-PAGE) }, 'Previous page')
  const next = h('button', { type: 'button', onclick: () => void move(PAGE) }, 'Next page')
  const allKeys = h('button', { type: 'button', hidden: true, onclick: () => void clearSearch() }, 'Show all keys')

  const searchText = h('input', { name: 'search', type: 'search', autocomplete: 'off' })
  const search = checkedField(
    'Description',
    searchText,
    '1 to 64 bytes, as in the description field (text, or base64: for bytes).',
    (text) => (text === '' ? 'Type what to search for.' : descrProblem(text)),
  )
  const match = select('match', MATCHES, 'any')
  const searchForm = h(
    'form',
    {
      role: 'search',
      class: 'key-search',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault()
        void screen.run('Searching…', async () => {
          checkAll([search])
          searching = pattern(searchText.value, match.value)
          offset = 0
          await fetchPage()
          return shown.length === 0 ? 'No key’s description matches.' : `${shown.length} matching keys shown.`
        })
      },
    },
    h('h3', {}, 'Search by description'),
    search.row,
    field('Match', match),
    h('button', { type: 'submit' }, 'Search'),
  )

  async function fetchPage(): Promise<void> {
    const { session } = screen.ctx
    const page = (
      searching === undefined
        ? await session.get(`/api/keymgmt/list/${offset}/${PAGE}`, 'keymgmt:list')
        : await session.request('/api/keymgmt/search', 'keymgmt:search', {
            body: { descr: searching, offset, limit: PAGE },
          })
    ) as KeyPage
    shown = page.list
    total = page.total
    draw(page)
  }

  function draw(page: KeyPage): void {
    const first = page.offset + 1
    const last = page.offset + page.listed
    if (searching === undefined) {
      caption.textContent = 'Keys'
      range.textContent = page.total === 0 ? 'No keys yet.' : `Keys ${first}–${last} of ${page.total}`
      next.disabled = last >= page.total
    } else {
      // A search's `total` is the repository's (crypto-contract §2): how many match is not told.
      caption.textContent = 'Keys whose description matches'
      range.textContent =
        page.listed === 0
          ? `No matches from ${first} on (the device holds ${page.total} keys).`
          : `Matches ${first}–${last} (the device holds ${page.total} keys)`
      next.disabled = page.listed < PAGE
    }
    previous.disabled = page.offset === 0
    allKeys.hidden = searching === undefined
    body.replaceChildren(...page.list.map(row))
  }

  function row(entry: KeyEntry): HTMLTableRowElement {
    const { algorithm, usage, holds } = listedParts(entry.type)
    return h(
      'tr',
      {},
      h('td', { class: 'kid' }, entry.kid),
      h('td', {}, algorithm),
      h('td', {}, usage),
      h('td', {}, holds),
      h('td', {}, entry.label),
      h('td', {}, descrText(entry.descr)),
      h(
        'td',
        {},
        h(
          'button',
          { type: 'button', 'aria-label': `Open key ${entry.label} (${entry.kid})`, onclick: () => void open(entry) },
          'Open',
        ),
      ),
    )
  }

  const open = (entry: KeyEntry) =>
    screen.run('Reading the key…', async () => {
      await screen.open(entry.kid)
      return ''
    })

  function move(by: number) {
    return screen.run('Loading the keys…', async () => {
      offset = Math.max(0, offset + by)
      await fetchPage()
      return range.textContent ?? ''
    })
  }

  function clearSearch() {
    return screen.run('Loading the keys…', async () => {
      searching = undefined
      offset = 0
      await fetchPage()
      return 'All keys shown.'
    })
  }

  const head = ['KID', 'Algorithm', 'Use', 'Holds', 'Label', 'Description', 'Actions']
  const element = h(
    'section',
    { class: 'key-list', 'aria-label': 'Key list' },
    searchForm,
    h('div', { class: 'pager' }, range, previous, next, allKeys),
    h(
      'div',
      { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Keys table' },
      h(
        'table',
        { class: 'keys' },
        caption,
        h('thead', {}, h('tr', {}, ...head.map((name) => h('th', { scope: 'col' }, name)))),
        body,
      ),
    ),
  )

  return {
    element,
    async load(at) {
      searching = undefined
      offset = at === 'last' ? 0 : at
      await fetchPage()
      // Asked for, or past the end (the last key of the last page deleted): the last page.
      const last = Math.max(0, Math.floor((total - 1) / PAGE) * PAGE)
      if (offset === last || (at !== 'last' && shown.length > 0)) return
      offset = last
      await fetchPage()
    },
    get offset() {
      return offset
    },
    entry: (kid) => shown.find((entry) => entry.kid === kid),
  }
}
