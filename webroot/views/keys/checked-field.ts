// A labelled control whose rule shows before sending: the hint states it, and a broken rule is
// marked (aria-invalid) and explained next to the control, linked by aria-describedby.
import { field } from '../../dom.js'
import { setFieldError } from '../../field-error.js'
import { InputError } from '../../feedback.js'

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement

export interface CheckedField {
  readonly row: HTMLElement
  readonly control: Control
  /** Checks it now and shows the outcome; returns the problem, if any. */
  check(): string | undefined
}

export function checkedField(
  label: string,
  control: Control,
  hint: string,
  problem: (value: string) => string | undefined,
): CheckedField {
  const row = field(label, control, hint)
  const check = () => {
    const found = problem(control.value)
    setFieldError(control, found)
    return found
  }
  // Judged on sending, then at every keystroke until it is right; not on leaving the field, where
  // the message would move the button being clicked from under the pointer.
  control.addEventListener('input', () => control.hasAttribute('aria-invalid') && check())
  return { row, control, check }
}

/** Checks every field: the first broken one gets the focus and the action stops before sending. */
export function checkAll(fields: readonly CheckedField[]): void {
  const broken = fields.map((f) => [f, f.check()] as const).filter(([, problem]) => problem !== undefined)
  if (broken.length === 0) return
  broken[0]![0].control.focus()
  throw new InputError(`Not sent: ${broken.map(([, problem]) => problem).join(' ')}`)
}
