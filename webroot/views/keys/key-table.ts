// The table of keys: one row per key, in words, each with its Open button.
import { h } from '../../dom.js'
import type { KeyEntry } from '../../../client/browser.js'
import { descrText, listedParts } from './key-text.js'

const HEAD = ['KID', 'Algorithm', 'Use', 'Holds', 'Label', 'Description', 'Actions']

export interface KeyTable {
  readonly element: HTMLElement
  /** Shows these keys under this caption. */
  show(caption: string, list: readonly KeyEntry[]): void
}

export function keyTable(open: (entry: KeyEntry) => void): KeyTable {
  const caption = h('caption', {}, 'Keys')
  const body = h('tbody')
  const row = (entry: KeyEntry) => {
    const { algorithm, usage, holds } = listedParts(entry.type)
    const label = `Open key ${entry.label} (${entry.kid})`
    return h(
      'tr',
      {},
      h('td', { class: 'kid' }, entry.kid),
      h('td', {}, algorithm),
      h('td', {}, usage),
      h('td', {}, holds),
      h('td', {}, entry.label),
      h('td', {}, descrText(entry.descr)),
      h('td', {}, h('button', { type: 'button', 'aria-label': label, onclick: () => open(entry) }, 'Open')),
    )
  }
  const element = h(
    'div',
    { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Keys table' },
    h(
      'table',
      { class: 'keys' },
      caption,
      h('thead', {}, h('tr', {}, ...HEAD.map((name) => h('th', { scope: 'col' }, name)))),
      body,
    ),
  )
  return {
    element,
    show(text, list) {
      caption.textContent = text
      body.replaceChildren(...list.map(row))
    },
  }
}
