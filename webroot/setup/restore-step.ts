// The set-up wizard's other way: restore a backup file (docs/backup.md) onto this fresh device instead of a set-up.
// What the file says of itself (its source device, when it was made, its key count) shows before anything is
// sent; then it is uploaded and opened under the backup passphrase, and the login form comes back: the owner logs
// in with the source device's user passphrase, which is this device's owner's now.
import { RESTORE_FILENAME, restore } from '../../client/browser.js'
import { BackupFormatError, readBackupHeader, type BackupHeader } from '../../protocol/browser.js'
import { inBackupWords } from '../backup-words.js'
import { openDevice } from '../device-session.js'
import { field, h, password } from '../dom.js'
import { refuseIfInvalid, setFieldError } from '../field-error.js'
import { transferProgress } from '../transfer-progress.js'
import { uploadFile } from '../upload-file.js'
import { unixTimeWords } from '../views/time-words.js'
import type { Feedback } from '../feedback.js'

/** What the wizard gives the step (its SetupHooks): the shell's login section and feedback. */
interface RestoreHooks {
  /** The login section, hidden while the wizard shows. */
  login: HTMLElement
  feedback: Feedback
}

/** The file's header, or why it is no backup this app reads (marked on the file field). */
async function readPicked(input: HTMLInputElement): Promise<BackupHeader | undefined> {
  const file = input.files?.[0]
  let problem = 'Pick a backup file (.hembackup).'
  if (file)
    try {
      return readBackupHeader(new Uint8Array(await file.arrayBuffer()))
    } catch (error) {
      if (!(error instanceof BackupFormatError)) throw error
      problem = `Not a backup this app reads: ${error.message}.`
    }
  setFieldError(input, problem)
  return undefined
}

function factsOf(header: BackupHeader): HTMLElement {
  return h(
    'dl',
    { id: 'restore-facts' },
    h('dt', {}, 'Source device'),
    h('dd', {}, header.devid),
    h('dt', {}, 'Made'),
    h('dd', {}, unixTimeWords(header.created)),
    h('dt', {}, 'Keys'),
    h('dd', {}, String(header.keys)),
  )
}

export function restoreStep(hooks: RestoreHooks, section: HTMLElement): HTMLElement {
  const input = h('input', { type: 'file', accept: '.hembackup,application/octet-stream' })
  const facts = h('div')
  const passphrase = password('off')
  const progress = transferProgress('Backup upload progress')
  let header: BackupHeader | undefined
  input.addEventListener('change', async () => {
    setFieldError(input, undefined)
    header = await readPicked(input)
    facts.replaceChildren(...(header ? [factsOf(header)] : []))
  })

  const run = async () => {
    setFieldError(passphrase, passphrase.value ? undefined : 'Type the backup passphrase.')
    if (!header) await readPicked(input)
    refuseIfInvalid(form)
    const secret = passphrase.value
    passphrase.value = ''
    const file = input.files![0]!
    await uploadFile('/api/system/restore/upload', RESTORE_FILENAME, file, undefined, {
      onProgress: (sent, total) => progress.show(sent, total),
    }).catch(inBackupWords)
    hooks.feedback.progress('Opening the backup…')
    const restored = await restore(openDevice, secret).catch(inBackupWords)
    // The device is its source owner's now: the login takes the source's passphrases.
    section.remove()
    hooks.login.hidden = false
    hooks.login.querySelector('input')?.focus()
    return `Restored ${restored.keys} keys from device ${restored.source}: log in with its user passphrase.`
  }

  const form = h(
    'form',
    {
      'aria-labelledby': 'setup-restore-title',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault()
        void hooks.feedback.run('Restoring the backup…', run)
      },
    },
    h('h3', { id: 'setup-restore-title', tabindex: '-1' }, 'Restore from a backup'),
    field('Backup file', input),
    facts,
    field('Backup passphrase', passphrase),
    progress.element,
    h('button', { type: 'submit' }, 'Restore the device'),
  )
  return form
}
