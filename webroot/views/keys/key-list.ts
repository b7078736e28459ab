// The keys, a page at a time (the device gives at most 15), or those whose description matches a
// search; each row opens the key.
import { h } from '../../dom.js'
import type { KeyEntry, KeyList as KeyPage } from '../../../client/browser.js'
import { keyPager, PAGE } from './key-pager.js'
import { keySearchForm } from './key-search.js'
import { keyTable } from './key-table.js'
import type { KeysScreen } from './keys-screen.js'

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
  /** The search's pattern while its matches show. */
  let searching: string | undefined
  let offset = 0
  let shown: readonly KeyEntry[] = []
  let total = 0
  const table = keyTable(
    (entry) =>
      void screen.run('Reading the key…', async () => {
        await screen.open(entry.kid)
        return ''
      }),
  )
  /** Shows the page at `at` of `search`'s matches (or of all keys), as one user action. */
  const go = (at: number, search: string | undefined, done: () => string) =>
    screen.run('Loading the keys…', async () => {
      searching = search
      offset = Math.max(0, at)
      await fetchPage()
      return done()
    })
  const pager = keyPager(
    (by) => void go(offset + by, searching, () => pager.words),
    () => void go(0, undefined, () => 'All keys shown.'),
  )
  const searchForm = keySearchForm(screen, async (pattern) => {
    searching = pattern
    offset = 0
    await fetchPage()
    return shown.length === 0 ? 'No key’s description matches.' : `${shown.length} matching keys shown.`
  })

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
    table.show(searching === undefined ? 'Keys' : 'Keys whose description matches', page.list)
    pager.show(page, searching !== undefined)
  }

  const element = h(
    'section',
    { class: 'key-list', 'aria-label': 'Key list' },
    searchForm,
    pager.element,
    table.element,
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
