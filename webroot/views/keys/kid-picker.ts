// A KID asked of the owner: chosen from the device's keys that fit (label, type, short KID), or typed
// or pasted into the text box below the list, which holds the value either way.
import { field, h } from '../../dom.js'
import type { KeyEntry, KeyList } from '../../../client/browser.js'
import { normaliseKid } from '../../../protocol/browser.js'
import type { AppContext } from '../../view.js'
import type { CheckedField } from './checked-field.js'
import { setFieldError } from '../../field-error.js'
import { KID_RULE, kidProblem, listedParts } from './key-text.js'

/** The most keys a list call gives (crypto-contract §1). */
const PAGE = 15

/** Every key of the device, oldest first, a page at a time. */
export async function deviceKeys(ctx: AppContext): Promise<KeyEntry[]> {
  const keys: KeyEntry[] = []
  for (;;) {
    const page = (await ctx.session.get(`/api/keymgmt/list/${keys.length}/${PAGE}`, 'keymgmt:list')) as KeyList
    keys.push(...page.list)
    if (page.list.length === 0 || keys.length >= page.total) return keys
  }
}

export interface KidPickerOptions {
  /** The text box's label ("Peer key (KID)"); the list's is the same without "(KID)". */
  label: string
  hint: string
  keys(): Promise<KeyEntry[]>
  /** The keys the list offers (the same curve, able to agree, …); `all` is every key listed. */
  fits(entry: KeyEntry, all: readonly KeyEntry[]): boolean
  /** Why the text cannot be sent; by default it must be a KID. */
  problem?(text: string): string | undefined
}

export interface KidPicker extends CheckedField {
  readonly control: HTMLInputElement
  /** The KID given (lower case), or '' when none is. */
  value(): string
  set(kid: string): void
  /** Lists the keys that fit now (again). */
  refresh(): Promise<void>
}

const TYPED = ''

export function kidPicker(o: KidPickerOptions): KidPicker {
  const listName = o.label.replace(/\s*\(KID\)$/, '')
  const list = h('select', { name: 'kid-choice' }, h('option', { value: TYPED }, 'None chosen: type or paste a KID'))
  const control = h('input', { name: 'kid', autocomplete: 'off', spellcheck: 'false' })
  const row = h(
    'div',
    { class: 'kid-picker' },
    field(listName, list, 'The device’s keys that fit: label, type and the start of the KID.'),
    field(o.label, control, `${o.hint} ${KID_RULE}`),
  )
  const problem = o.problem ?? kidProblem
  const check = () => {
    const found = problem(control.value)
    setFieldError(control, found)
    return found
  }
  const matchList = () => {
    const kid = normaliseKid(control.value.trim())
    list.value = kid && [...list.options].some((option) => option.value === kid) ? kid : TYPED
  }
  list.addEventListener('change', () => {
    control.value = list.value
    if (control.hasAttribute('aria-invalid')) check()
  })
  control.addEventListener('input', () => {
    matchList()
    if (control.hasAttribute('aria-invalid')) check()
  })
  return {
    row,
    control,
    check,
    value: () => normaliseKid(control.value.trim()) ?? '',
    set(kid) {
      control.value = kid
      matchList()
    },
    async refresh() {
      const all = await o.keys()
      const fitting = all.filter((entry) => o.fits(entry, all))
      list.replaceChildren(
        list.options[0]!,
        ...fitting.map((entry) => {
          const { algorithm, holds } = listedParts(entry.type)
          return h(
            'option',
            { value: entry.kid },
            `${entry.label} · ${algorithm}, ${holds} · ${entry.kid.slice(0, 8)}…`,
          )
        }),
      )
      matchList()
    },
  }
}
