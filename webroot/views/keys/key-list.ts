// The keys, a page at a time as the device gives them (at most 15), or those a search matches; each
// card opens its key. The device searches descriptions only, so a search reads every key's entry
// (15 a request) and matches label, description and KID here, and says so.
import { h } from '../../dom.js'
import { allKeys, type KeyEntry, type KeyList as KeyPage } from '../../../client/browser.js'
import { keyCards } from './key-cards.js'
import { keyPager, PAGE } from './key-pager.js'
import { keySearch, matches, queryWords, searchWords } from './key-search.js'
import type { KeysScreen } from './keys-screen.js'

export interface KeyList {
  readonly element: HTMLElement
  /**
   * Shows all keys again (no search) from `offset`, or the last page, which holds the newest key;
   * `fresh` is the KID of a key just made, marked as new.
   */
  load(offset: number | 'last', fresh?: string): Promise<void>
  /** The offset of the page shown. */
  readonly offset: number
  /** The entry on the page shown, by KID. */
  entry(kid: string): KeyEntry | undefined
}

/** A search's outcome: every key read for it, and those that match. */
interface Found {
  all: readonly KeyEntry[]
  matches: readonly KeyEntry[]
}

/** The offset of the last page of `count` keys. */
const lastPage = (count: number) => Math.max(0, Math.floor((count - 1) / PAGE) * PAGE)

const opener = (screen: KeysScreen) => (entry: KeyEntry) =>
  void screen.run('Reading the key…', async () => {
    await screen.open(entry.kid)
    return ''
  })

export function keyList(screen: KeysScreen): KeyList {
  let offset = 0
  let shown: readonly KeyEntry[] = []
  let total = 0
  let found: Found | undefined
  const cards = keyCards(opener(screen))
  const search = keySearch(() => void screen.run('Reading every key’s entry to search them…', find))
  const pager = keyPager(
    (by) =>
      void screen.run('Loading the keys…', async () => {
        if (found) showFound(offset + by)
        else await fetchPage(offset + by)
        return pager.words
      }),
    () =>
      void screen.run('Loading the keys…', async () => {
        await load(0)
        return 'All keys shown.'
      }),
  )

  async function fetchPage(at: number, fresh?: string): Promise<void> {
    const path = `/api/keymgmt/list/${Math.max(0, at)}/${PAGE}`
    const page = (await screen.ctx.session.get(path, 'keymgmt:list')) as KeyPage
    offset = page.offset
    shown = page.list
    total = page.total
    cards.show('Keys', page.list, fresh)
    pager.show(page.offset, page.listed, page.total, false)
    search.tell(undefined)
  }

  function showFound(at: number): void {
    const { matches: hits } = found!
    offset = Math.max(0, Math.min(at, lastPage(hits.length)))
    shown = hits.slice(offset, offset + PAGE)
    cards.show('Keys that match', shown)
    pager.show(offset, shown.length, hits.length, true)
  }

  async function find(): Promise<string> {
    const query = search.query
    if (query.text.trim() === '' && query.type === '') {
      await load(0)
      return 'All keys shown.'
    }
    const all = found?.all ?? (await allKeys(screen.ctx.session))
    found = { all, matches: all.filter((entry) => matches(entry, query)) }
    showFound(0)
    const told = searchWords(queryWords(query, search.filter), all.length, found.matches.length)
    search.tell(told.searched)
    return told.outcome
  }

  async function load(at: number | 'last', fresh?: string): Promise<void> {
    found = undefined
    search.clear()
    await fetchPage(at === 'last' ? 0 : at, fresh)
    // Asked for, or past the end (the last key of the last page deleted): the last page.
    const last = lastPage(total)
    if (offset === last || (at !== 'last' && shown.length > 0)) return
    await fetchPage(last, fresh)
  }

  return {
    element: h(
      'section',
      { class: 'key-list', 'aria-label': 'Key list' },
      search.element,
      pager.element,
      cards.element,
    ),
    load,
    get offset() {
      return offset
    },
    entry: (kid) => shown.find((entry) => entry.kid === kid),
  }
}
