// The search by description: what to look for and where in the description, checked before sending.
import { field, h, select } from '../../dom.js'
import { toBase64 } from '../../../client/browser.js'
import { checkAll, checkedField } from './checked-field.js'
import { descrBytes, descrProblem } from './key-text.js'
import type { KeysScreen } from './keys-screen.js'

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

/** The form; `search` shows the keys matching a pattern and says how many it shows. */
export function keySearchForm(screen: KeysScreen, search: (pattern: string) => Promise<string>): HTMLFormElement {
  const text = h('input', { name: 'search', type: 'search', autocomplete: 'off' })
  const description = checkedField(
    'Description',
    text,
    '1 to 64 bytes, as in the description field (text, or base64: for bytes).',
    (value) => (value === '' ? 'Type what to search for.' : descrProblem(value)),
  )
  const match = select('match', MATCHES, 'any')
  return h(
    'form',
    {
      role: 'search',
      class: 'key-search',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault()
        void screen.run('Searching…', async () => {
          checkAll([description])
          return search(pattern(text.value, match.value))
        })
      },
    },
    h('h3', {}, 'Search by description'),
    description.row,
    field('Match', match),
    h('button', { type: 'submit' }, 'Search'),
  )
}
