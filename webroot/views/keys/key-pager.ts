// Where the list is: which keys show of how many (of all keys, or of a search's matches), and the
// moves to the pages around it.
import { h } from '../../dom.js'

export const PAGE = 15

export interface KeyPager {
  readonly element: HTMLElement
  /** Says that keys `offset + 1` to `offset + listed` of `total` show (of the matches while `matching`). */
  show(offset: number, listed: number, total: number, matching: boolean): void
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
    show(offset, listed, total, matching) {
      const span = `${offset + 1}–${offset + listed} of ${total}`
      if (matching) range.textContent = total === 0 ? 'No key matches.' : `Matches ${span}`
      else range.textContent = total === 0 ? 'No keys yet.' : `Keys ${span}`
      previous.disabled = offset === 0
      next.disabled = offset + listed >= total
      allKeys.hidden = !matching
    },
    get words() {
      return range.textContent ?? ''
    },
  }
}
