// A control's own error message, next to it: aria-invalid, and the message among what describes it.
import { h, uid } from './dom.js'
import { InputError } from './feedback.js'

const messages = new WeakMap<HTMLElement, HTMLElement>()

/** Shows `message` under `control` (marked invalid), or clears it when `message` is undefined. */
export function setFieldError(control: HTMLElement, message: string | undefined): void {
  let shown = messages.get(control)
  if (!shown) {
    shown = h('p', { id: uid('error'), class: 'field-error', hidden: true })
    messages.set(control, shown)
    ;(control.closest('.field') ?? control).append(shown)
  }
  const described = (control.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id && id !== shown.id)
  shown.textContent = message ?? ''
  shown.hidden = message === undefined
  if (message === undefined) control.removeAttribute('aria-invalid')
  else control.setAttribute('aria-invalid', 'true')
  if (message !== undefined) described.push(shown.id)
  if (described.length) control.setAttribute('aria-describedby', described.join(' '))
  else control.removeAttribute('aria-describedby')
}

/**
 * When a control of `form` is marked invalid: focuses the first and throws, so that nothing is
 * sent; each field says why, the alert says that nothing was sent.
 */
export function refuseIfInvalid(form: HTMLElement): void {
  const first = form.querySelector<HTMLElement>('[aria-invalid="true"]')
  if (!first) return
  first.focus()
  throw new InputError('Nothing was sent: correct the fields marked first.')
}
