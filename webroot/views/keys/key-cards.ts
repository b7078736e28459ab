// The keys as cards, one per key at every width (a grid of them on a wide screen, one column on a
// phone): its label, its type in words, when it was made, its KID's short form and its Open button.
// The same markup everywhere, so a phone shows all a desktop does and nothing scrolls sideways.
import { h, uid } from '../../dom.js'
import type { KeyEntry } from '../../../client/browser.js'
import { typeWords } from './key-type-words.js'
import { dateWords, descrText, shortKid } from './key-text.js'

export interface KeyCards {
  readonly element: HTMLElement
  /** Shows these keys under this heading; `fresh` (a KID) is the new key, marked and scrolled to. */
  show(heading: string, list: readonly KeyEntry[], fresh?: string): void
}

function card(entry: KeyEntry, open: (entry: KeyEntry) => void, fresh: boolean): HTMLLIElement {
  const title = uid('key')
  const row = (name: string, value: string | HTMLElement) => [h('dt', {}, name), h('dd', {}, value)]
  const descr = descrText(entry.descr)
  return h(
    'li',
    { class: fresh ? 'key-card new-key' : 'key-card', 'data-kid': entry.kid, 'aria-labelledby': title },
    h('h4', { id: title }, entry.label, fresh ? h('span', { class: 'new-mark' }, ' (new)') : ''),
    h(
      'dl',
      {},
      ...row('Type', typeWords(entry.type).line),
      ...row('Created', dateWords(entry.created)),
      ...row('KID', h('code', { class: 'kid', title: entry.kid }, shortKid(entry.kid))),
      ...(descr ? row('Description', descr) : []),
    ),
    h(
      'button',
      { type: 'button', 'aria-label': `Open key ${entry.label} (${entry.kid})`, onclick: () => open(entry) },
      'Open',
    ),
  )
}

export function keyCards(open: (entry: KeyEntry) => void): KeyCards {
  const heading = h('h3', { id: uid('keys') }, 'Keys')
  const list = h('ul', { class: 'key-cards', 'aria-labelledby': heading.id })
  return {
    element: h('div', { class: 'key-cards-wrap' }, heading, list),
    show(text, keys, fresh) {
      heading.textContent = text
      list.replaceChildren(...keys.map((entry) => card(entry, open, entry.kid === fresh)))
      const marked = list.querySelector<HTMLElement>('.new-key')
      if (!marked) return
      // Where the owner's eyes and keyboard go after a create, import or derive.
      marked.tabIndex = -1
      marked.scrollIntoView({ block: 'nearest' })
      marked.focus()
    },
  }
}
