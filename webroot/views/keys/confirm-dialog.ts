// A yes-or-no question in a modal <dialog>: the focus starts on Cancel, Escape cancels, and the
// dialog leaves the page when answered.
import { h, uid } from '../../dom.js'

/** Resolves true only when the user presses the `confirm` button. */
export function confirmDialog(title: string, text: string, confirm: string): Promise<boolean> {
  return new Promise((resolve) => {
    const titleId = uid('dialog-title')
    const textId = uid('dialog-text')
    let confirmed = false
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': titleId, 'aria-describedby': textId })
    const cancelButton = h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel')
    const confirmButton = h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: () => {
          confirmed = true
          dialog.close()
        },
      },
      confirm,
    )
    dialog.append(
      h('h3', { id: titleId }, title),
      h('p', { id: textId }, text),
      h('div', { class: 'buttons' }, cancelButton, confirmButton),
    )
    dialog.addEventListener('close', () => {
      dialog.remove()
      resolve(confirmed)
    })
    document.body.append(dialog)
    dialog.showModal()
    cancelButton.focus()
  })
}
