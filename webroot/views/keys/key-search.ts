// The search over the keys: one field for a label, a description or a KID, and a type filter. The
// device's own search matches descriptions only, so the page reads the whole list and matches here.
import { field, h } from '../../dom.js'
import type { KeyEntry } from '../../../client/browser.js'
import { keyTypes, type KeyKind, type KeyType } from '../../../protocol/browser.js'
import { descrText } from './key-text.js'
import { KIND_WORDS, typeName, typeWords } from './key-type-words.js'

/** What the owner asked for: `text` (maybe empty) and a type filter (`kind:aes`, `type:AES256`, or empty). */
export interface KeyQuery {
  readonly text: string
  readonly type: string
}

const ANY = ''

/** The filter's options: every kind, then each of its types, in words. */
function typeFilter(): HTMLSelectElement {
  const kinds = Object.keys(KIND_WORDS) as KeyKind[]
  const types = Object.keys(keyTypes) as KeyType[]
  return h(
    'select',
    { name: 'type' },
    h('option', { value: ANY }, 'Any type'),
    ...kinds.map((kind) =>
      h(
        'optgroup',
        { label: KIND_WORDS[kind] },
        h('option', { value: `kind:${kind}` }, `Any of ${KIND_WORDS[kind]}`),
        ...types
          .filter((type) => keyTypes[type].kind === kind)
          .map((type) => h('option', { value: `type:${type}` }, typeName(type))),
      ),
    ),
  )
}

/** Whether `entry` is what `query` asks for: its type, and a label or description that holds the text, or a KID. */
export function matches(entry: KeyEntry, query: KeyQuery): boolean {
  const type = typeWords(entry.type).type
  if (query.type.startsWith('kind:') && (!type || keyTypes[type].kind !== query.type.slice(5))) return false
  if (query.type.startsWith('type:') && type !== query.type.slice(5)) return false
  const text = query.text.trim().toLowerCase()
  if (text === '') return true
  return (
    entry.label.toLowerCase().includes(text) ||
    descrText(entry.descr).toLowerCase().includes(text) ||
    kidMatches(entry.kid, text.replace(/\s/g, ''))
  )
}

/** A KID from its first digits, or as its short form shows it ("1a2b3c4d…9f0c": its start and end). */
function kidMatches(kid: string, text: string): boolean {
  const [start = '', end = ''] = text.split('…')
  return start !== '' && kid.startsWith(start) && kid.endsWith(end)
}

/** The query in words, for the result line: "“abc” (label, description or KID) and type AES-256". */
export function queryWords(query: KeyQuery, filter: HTMLSelectElement): string {
  const text = query.text.trim()
  const parts = [
    text ? `“${text}” in a label, a description or the start of a KID` : '',
    query.type ? `of type ${filter.selectedOptions[0]?.textContent ?? query.type}` : '',
  ]
  return parts.filter(Boolean).join(', ')
}

/** What was searched, and how, for the line under the form; and the outcome, for the status line. */
export function searchWords(query: string, keys: number, count: number): { searched: string; outcome: string } {
  return {
    searched:
      `Searched for ${query} among all ${keys} keys the device holds ` +
      '(their entries read from the device and matched in this page).',
    outcome: count === 0 ? `No key matches: ${query}.` : `${count} ${count === 1 ? 'key matches' : 'keys match'}.`,
  }
}

export interface KeySearch {
  /** The form, and under it the line that says what was searched. */
  readonly element: HTMLElement
  readonly query: KeyQuery
  /** The type filter (its option's words name the type). */
  readonly filter: HTMLSelectElement
  clear(): void
  /** Says what was searched (undefined: no search shows). */
  tell(searched: string | undefined): void
}

/** `search` runs the query (empty: all keys again); the filter applies as soon as it is chosen. */
export function keySearch(search: () => void): KeySearch {
  const text = h('input', { name: 'search', type: 'search', autocomplete: 'off', spellcheck: 'false' })
  const filter = typeFilter()
  const searched = h('p', { class: 'searched hint', hidden: true })
  const form = h(
    'form',
    {
      role: 'search',
      class: 'key-search',
      'aria-label': 'Search the keys',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault()
        search()
      },
    },
    field(
      'Label, description or KID',
      text,
      'A label or description matches anywhere in it, in any case; a KID from its first digits. The device ' +
        'searches descriptions only, so the page reads every key’s entry and matches them here.',
    ),
    field('Type', filter),
    h('button', { type: 'submit' }, 'Search'),
  )
  filter.addEventListener('change', search)
  return {
    element: h('div', {}, form, searched),
    get query() {
      return { text: text.value, type: filter.value }
    },
    filter,
    clear() {
      text.value = ''
      filter.value = ANY
    },
    tell(words) {
      searched.textContent = words ?? ''
      searched.hidden = words === undefined
    },
  }
}
