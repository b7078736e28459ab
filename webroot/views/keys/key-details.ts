// One key: what the device says of it (keymgmt/get), its public key shown and downloadable as PEM
// and as raw bytes, its label and description changed, or the key deleted after a confirmation.
import { h } from '../../dom.js'
import type { KeyDetails, KeyEntry } from '../../../client/browser.js'
import { checkAll, checkedField } from './checked-field.js'
import { confirmDialog } from './confirm-dialog.js'
import { DESCR_RULE, descrField, descrProblem, descrText, kidGroups, LABEL_RULE, labelProblem } from './key-text.js'
import { typeWords } from './key-type-words.js'
import type { KeysScreen } from './keys-screen.js'
import { publicKeyView } from './public-key-view.js'
import { copyButton } from '../../copy-button.js'

export const when = (seconds: number) => `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`

/** The whole KID, breaking only between its groups of 8 digits, with its copy button. */
function kidValue(kid: string): HTMLElement {
  const groups = kidGroups(kid).flatMap((group, i) => [i > 0 ? h('wbr') : '', h('span', {}, group)])
  return h(
    'span',
    {},
    h('code', { class: 'kid-full' }, ...groups),
    ' ',
    copyButton('Copy the KID', () => kid),
  )
}

function updateForm(screen: KeysScreen, entry: KeyEntry): HTMLFormElement {
  const label = checkedField('Label', h('input', { name: 'label', value: entry.label }), LABEL_RULE, labelProblem)
  const descr = checkedField(
    'Description',
    h('input', { name: 'descr', value: descrText(entry.descr) }),
    `${DESCR_RULE} Empty removes it.`,
    descrProblem,
  )
  return h(
    'form',
    {
      class: 'key-update',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault()
        void screen.run('Saving the label and description…', async () => {
          checkAll([label, descr])
          const body = { kid: entry.kid, label: label.control.value, ...descrField(descr.control.value) }
          await screen.ctx.session.request('/api/keymgmt/update', 'keymgmt:upd', { body })
          await screen.reload(entry.kid)
          await screen.open(entry.kid)
          return `Saved the label and description of ${entry.kid}.`
        })
      },
    },
    h('h4', {}, 'Label and description'),
    label.row,
    descr.row,
    h('button', { type: 'submit' }, 'Save label and description'),
  )
}

function remove(screen: KeysScreen, entry: KeyEntry, close: () => void) {
  return async () => {
    const sure = await confirmDialog(
      `Delete the key “${entry.label}”?`,
      `Key ${entry.kid} is destroyed in the device: whatever it encrypted or wrapped can no longer be ` +
        'decrypted, and it cannot be brought back.',
      'Delete the key',
    )
    if (!sure) return
    await screen.run('Deleting the key…', async () => {
      await screen.ctx.session.request(`/api/keymgmt/delete/${entry.kid}`, 'keymgmt:del', { method: 'DELETE' })
      close()
      await screen.reload()
      return `Deleted the key “${entry.label}” (${entry.kid}).`
    })
  }
}

/** Fills `into` with `entry`'s details, read now from the device. */
export async function showDetails(screen: KeysScreen, entry: KeyEntry, into: HTMLElement): Promise<void> {
  const details = (await screen.ctx.session.get(`/api/keymgmt/get/${entry.kid}`, 'keymgmt:get')) as KeyDetails
  const close = () => into.replaceChildren()
  const uses = h('p', { class: 'hint' }, 'Loading what this key can do…')
  const title = h('h3', { tabindex: -1 }, `Key “${entry.label}”`)
  const row = (name: string, value: string | HTMLElement) => [h('dt', {}, name), h('dd', {}, value)]
  into.replaceChildren(
    title,
    h(
      'dl',
      { class: 'key-details' },
      ...row('KID', kidValue(entry.kid)),
      ...row('Type', typeWords(entry.type).line),
      ...row('Created', when(entry.created)),
      ...row('Updated', when(details.updated)),
      ...row('Description', descrText(details.descr) || 'none'),
    ),
    ...publicKeyView(entry, details),
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'button', class: 'danger', onclick: remove(screen, entry, close) }, 'Delete key…'),
      h('button', { type: 'button', onclick: close }, 'Close'),
    ),
    uses,
    updateForm(screen, entry),
  )
  title.focus()
  // The operations' code is loaded when a key first opens: the first load has no need of it.
  const { useKeySection } = await import('./operations/use-key.js')
  uses.replaceWith(useKeySection(screen, entry))
}
