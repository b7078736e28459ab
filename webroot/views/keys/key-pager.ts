// Where the list is: which keys show of how many, and the moves to the pages around it.
import { h } from '../../dom.js'
import type { KeyList as KeyPage } from '../../../client/browser.js'

export const PAGE = 15

export interface KeyPager {
  readonly element: HTMLElement
  /** Says which keys `page` holds, of all keys or of a search's matches, and which moves are open. */
  show(page: KeyPage, searching: boolean): void
  /** What it says now. */
  readonly words: string
}

/** `move` goes a page back (-PAGE) or on (PAGE); `showAll` ends a search. */
export function keyPager(move: (by: number) => void, showAll: () => void): KeyPager {
  const range = h('p', { class: 'range', 'aria-live': 'polite' })
  const previous = h('button', { type: 'button', onclick: () => move(-PAGE) }, 'Previous page')
  const next = h('button', { type: 'button', onclick: () => move(PAGE) }, 'Next page')
  const allKeys = h('button', { type: 'button', hidden: true, onclick: showAll }, 'Show all keys')
  return {
    element: h('div', { class: 'pager' }, range, previous, next, allKeys),
    show(page, searching) {
      const first = page.offset + 1
      const last = page.offset + page.listed
      if (!searching) {
        range.textContent = page.total === 0 ? 'No keys yet.' : `Keys ${first}–${last} of ${page.total}`
        next.disabled = last >= page.total
      } else {
        // A search's `total` is the repository's (crypto-contract §2): how many match is not told.
        range.textContent =
          page.listed === 0
            ? `No matches from ${first} on (the device holds ${page.total} keys).`
            : `Matches ${first}–${last} (the device holds ${page.total} keys)`
        next.disabled = page.listed < PAGE
      }
      previous.disabled = page.offset === 0
      allKeys.hidden = !searching
    },
    get words() {
      return range.textContent ?? ''
    },
  }
}
