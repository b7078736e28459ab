// Every configuration field an update may change: the device's rule shown as the field's hint and
// checked here before anything is sent, then only the changed fields posted.
import { CONFIG_FIELD_RULES, STORAGE_MODES } from '../../../protocol/browser.js'
import { field, h, select } from '../../dom.js'
import type { AppContext } from '../../view.js'
import { EDITABLE_FIELDS, type EditableField, storageModeWords } from './config-fields.js'
import { refuseIfInvalid, setFieldError } from '../../field-error.js'
import type { RebootOffer } from './reboot-offer.js'

export const CONFIG_SCOPE = 'system:config'
export const CONFIG_PATH = '/api/system/config'

export type Config = Record<string, unknown>

interface Control {
  spec: EditableField
  input: HTMLInputElement | HTMLSelectElement
  /** What the control holds, as the device would take it; a text that is no number stays text (and fails its rule). */
  value(): unknown
}

const sentence = (what: string) => `${what[0]!.toUpperCase()}${what.slice(1)}.`

function control(spec: EditableField, current: unknown, usable: number): { control: Control; element: HTMLElement } {
  const rule = CONFIG_FIELD_RULES[spec.name]
  let input: HTMLInputElement | HTMLSelectElement
  let value: () => unknown
  if (spec.kind === 'switch') {
    const box = h('input', { type: 'checkbox', name: spec.name, checked: current === true })
    input = box
    value = () => box.checked
  } else if (spec.kind === 'storage-mode') {
    const options = STORAGE_MODES.map((mode) => [String(mode), storageModeWords(mode)] as const)
    const chooser = select(spec.name, options, String(current))
    input = chooser
    value = () => Number(chooser.value)
  } else {
    const text = h('input', {
      type: 'text',
      name: spec.name,
      value: String(current ?? ''),
      spellcheck: 'false',
      autocomplete: spec.name === 'email' ? 'email' : spec.name === 'user' ? 'name' : 'off',
      ...(spec.kind === 'integer' ? { inputmode: 'numeric' } : {}),
    })
    input = text
    value = () => (spec.kind === 'integer' && /^\s*\d+\s*$/.test(text.value) ? Number(text.value) : text.value)
  }
  const hint = [spec.kind === 'switch' ? '' : sentence(rule.what(usable)), spec.meaning ?? ''].filter(Boolean).join(' ')
  const element = field(spec.label, input, hint || undefined)
  if (spec.kind === 'switch') element.classList.add('switch')
  return { control: { spec, input, value }, element }
}

/**
 * The form over `config`; `usable` is the sectors the two disks share (from the status), which
 * bounds Disk 0's size. `saved` gets the configuration as the device has it after a change.
 */
export function configForm(
  ctx: AppContext,
  config: Config,
  usable: number,
  reboot: RebootOffer,
  saved: (config: Config) => void,
): HTMLFormElement {
  const hasDisks = typeof config.storage_mode === 'number'
  const built = EDITABLE_FIELDS.filter((spec) => hasDisks || !spec.disks).map((spec) =>
    control(spec, config[spec.name], usable),
  )
  const controls = built.map((b) => b.control)
  let current = config

  const reformat = h('input', { type: 'checkbox', name: 'reformat' })
  const reformatField = field(
    'Reformat both disks: erase everything on them',
    reformat,
    'On: the new Disk 0 size is saved and both disks are formatted anew; whatever they hold is lost.',
  )
  reformatField.classList.add('switch')
  reformatField.hidden = true
  const disk0 = controls.find((c) => c.spec.name === 'storage_disk0size')

  const changed = () => controls.filter((c) => c.value() !== current[c.spec.name])
  const check = (c: Control) => {
    const rule = CONFIG_FIELD_RULES[c.spec.name]
    setFieldError(c.input, rule.valid(c.value(), usable) ? undefined : sentence(rule.what(usable)))
  }
  const disk0Changing = () => disk0 !== undefined && disk0.value() !== current.storage_disk0size
  const checkReformat = (strict: boolean) => {
    reformatField.hidden = !disk0Changing()
    const missing = disk0Changing() && !reformat.checked
    setFieldError(reformat, missing && strict ? 'Tick this to confirm the reformat, or put the size back.' : undefined)
  }

  const save = async () => {
    controls.forEach(check)
    checkReformat(true)
    refuseIfInvalid(form)
    const changes = Object.fromEntries(changed().map((c) => [c.spec.name, c.value()]))
    const names = changed().map((c) => c.spec.label.toLowerCase())
    if (names.length === 0) return 'Nothing to save: no field differs from the device.'
    const answer = (await ctx.session.request(CONFIG_PATH, CONFIG_SCOPE, { body: changes })) as {
      reboot_required?: boolean
    }
    current = (await ctx.session.get(CONFIG_PATH, CONFIG_SCOPE)) as Config
    reformat.checked = false
    checkReformat(false)
    saved(current)
    if (answer.reboot_required) reboot.offer('The configuration was saved.')
    return `Saved: ${names.join(', ')}.`
  }

  const form = h(
    'form',
    {
      'aria-labelledby': 'config-title',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault()
        void ctx.feedback.run('Saving the configuration…', save)
      },
    },
    h('h3', { id: 'config-title' }, 'Configuration'),
    h('p', { class: 'hint' }, 'Each rule is the one the device enforces; only the fields you change are sent.'),
    ...built.map((b) => b.element),
    reformatField,
    h('button', { type: 'submit' }, 'Save the configuration'),
  )
  for (const c of controls)
    c.input.addEventListener(c.spec.kind === 'switch' || c.spec.kind === 'storage-mode' ? 'change' : 'input', () => {
      check(c)
      if (c === disk0) checkReformat(false)
    })
  reformat.addEventListener('change', () => checkReformat(false))
  return form
}
