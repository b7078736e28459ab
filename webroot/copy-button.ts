// A button that copies a value to the clipboard and says, in its own text, whether it did.
import { h } from './dom.js'

/**
 * `label` names what is copied ("Copy the link"); `text` is read at the click, so the button can stand
 * beside an output that changes. The clipboard needs a secure context and the user's permission: where it
 * refuses, the button says to copy from the field instead of failing silently.
 */
export function copyButton(label: string, text: () => string): HTMLButtonElement {
  const copy = h('button', { type: 'button', class: 'copy' }, label)
  copy.addEventListener('click', () => {
    void navigator.clipboard.writeText(text()).then(
      () => (copy.textContent = 'Copied'),
      () => (copy.textContent = 'Copy it from the field'),
    )
  })
  return copy
}
