// The fields every new key has (create, import, derive): its type, its use (mode, for the SECP
// curves), its label and its description.
import { field, h, uid } from '../../dom.js'
import { keyTypes, type KeyKind, type KeyType } from '../../../protocol/browser.js'
import { checkedField, type CheckedField } from './checked-field.js'
import { DESCR_RULE, descrField, descrProblem, LABEL_RULE, labelProblem } from './key-text.js'
import { KIND_WORDS, typeName } from './key-type-words.js'

export interface KeySpecFields {
  /** The rows, in the form's order. */
  readonly rows: HTMLElement[]
  readonly type: HTMLSelectElement
  /** Fields with a rule, checked before sending. */
  readonly checked: CheckedField[]
  /** `{label, type, mode?, descr?}` as the device takes it (crypto-contract §2). */
  body(): { label: string; type: KeyType; mode?: string; descr?: string }
}

/** A select of `types`, grouped by what they are. */
function typeSelect(types: readonly KeyType[]): HTMLSelectElement {
  const groups = (Object.keys(KIND_WORDS) as KeyKind[])
    .map((kind) => [kind, types.filter((type) => keyTypes[type].kind === kind)] as const)
    .filter(([, members]) => members.length > 0)
  return h(
    'select',
    { name: 'type' },
    ...groups.map(([kind, members]) =>
      h(
        'optgroup',
        { label: KIND_WORDS[kind] },
        ...members.map((type) => h('option', { value: type }, typeName(type))),
      ),
    ),
  )
}

/** The two flags of `mode`; shown only for the SECP curves, the only types that read it. */
function modeFieldset() {
  const legendId = uid('mode')
  const box = (flag: string, text: string) => {
    // Checked by default as an attribute, so that a form's reset puts ECDH back.
    const input = h('input', { type: 'checkbox', name: 'mode', value: flag, id: uid('flag'), checked: flag === 'ECDH' })
    return [input, h('div', { class: 'check' }, input, h('label', { for: input.id }, text))] as const
  }
  const [ecdh, ecdhRow] = box('ECDH', 'ECDH: key agreement and derive')
  const [exdsa, exdsaRow] = box('ExDSA', 'ExDSA: ECDSA signatures')
  const fieldset = h(
    'fieldset',
    { class: 'mode', 'aria-describedby': `${legendId}-hint` },
    h('legend', { id: legendId }, 'Use (mode)'),
    ecdhRow,
    exdsaRow,
    h('p', { id: `${legendId}-hint`, class: 'hint' }, 'Neither ticked means ECDH only, as the device reads it.'),
  )
  const value = () =>
    [ecdh, exdsa]
      .filter((box) => box.checked)
      .map((box) => box.value)
      .join(',')
  return { fieldset, value }
}

/** The type (one of `types`), use, label and description of a new key. */
export function keySpecFields(types: readonly KeyType[], typeLabel = 'Type'): KeySpecFields {
  const type = typeSelect(types)
  const mode = modeFieldset()
  const label = checkedField('Label', h('input', { name: 'label', autocomplete: 'off' }), LABEL_RULE, labelProblem)
  const descr = checkedField(
    'Description',
    h('input', { name: 'descr', autocomplete: 'off' }),
    DESCR_RULE,
    descrProblem,
  )
  const showMode = () => {
    mode.fieldset.hidden = keyTypes[type.value as KeyType].kind !== 'ec'
  }
  type.addEventListener('change', showMode)
  showMode()
  return {
    rows: [field(typeLabel, type), mode.fieldset, label.row, descr.row],
    type,
    checked: [label, descr],
    body() {
      const chosen = type.value as KeyType
      const flags = keyTypes[chosen].kind === 'ec' ? mode.value() : ''
      return {
        label: label.control.value,
        type: chosen,
        ...(flags ? { mode: flags } : {}),
        ...descrField(descr.control.value),
      }
    },
  }
}
