// Backup (docs/backup.md): the backup passphrase, and a backup file to download. Both are the master's (scope
// system:backup): a user's session asks for the master passphrase here, logs in with it for that one action and
// ends that login at once, dropping the derived key; a master's session acts itself.
import {
  BACKUP_SCOPE,
  backupFilename,
  backupPassphraseProblem,
  DeviceUnreachableError,
  setBackupPassphrase,
} from '../../../client/browser.js'
import { inBackupWords } from '../../backup-words.js'
import { answerRefusal, DeviceSession } from '../../device-session.js'
import { field, h, password } from '../../dom.js'
import { refuseIfInvalid, setFieldError } from '../../field-error.js'
import { refusedOverPlainHttp } from '../../plain-http.js'
import { strengthMeter } from '../../setup/passphrase-strength.js'
import { transferProgress, type TransferProgress } from '../../transfer-progress.js'
import type { AppContext } from '../../view.js'

/** Runs `act` on a master's session: the owner's own, or one opened with `master` for it alone. */
async function asMaster<T>(ctx: AppContext, master: HTMLInputElement, act: (s: DeviceSession) => Promise<T>) {
  if (ctx.session.role === 'M') return act(ctx.session)
  const passphrase = master.value
  master.value = ''
  const session = await DeviceSession.open(passphrase, BACKUP_SCOPE)
  try {
    return await act(session)
  } finally {
    session.end('')
  }
}

/** GET /api/system/backup, its bytes counted as they come; the file's name as the device suggests it. */
async function download(token: string, progress: TransferProgress): Promise<File> {
  const path = '/api/system/backup'
  const chunks: Uint8Array[] = []
  let answer: Response
  try {
    answer = await fetch(path, { headers: { Authorization: `Bearer ${token}` }, cache: 'no-store' })
    if (!answer.ok) throw answerRefusal(answer.status, await answer.text(), `GET ${path}`)
    const total = Number(answer.headers.get('Content-Length') ?? 0)
    let received = 0
    for (const reader = answer.body!.getReader(); ;) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      progress.show((received += value.length), Math.max(total, received))
    }
  } catch (cause) {
    if (cause instanceof Error && cause.name !== 'TypeError') throw cause
    throw new DeviceUnreachableError(path, { cause })
  }
  return new File(chunks as BlobPart[], backupFilename(answer.headers.get('Content-Disposition')))
}

export function backupPanel(ctx: AppContext): HTMLElement {
  const master = password('current-password')
  const next = password('new-password')
  const repeat = password('new-password')
  const progress = transferProgress('Backup download progress')
  const saved = h('p', { id: 'backup-file' })
  const needsMaster = ctx.session.role !== 'M'
  const checkMaster = () =>
    setFieldError(master, needsMaster && !master.value ? 'Type the master passphrase.' : undefined)
  let link: string | undefined
  const newField = field('New backup passphrase', next, 'At least 12 bytes; not a login passphrase.')
  newField.append(strengthMeter(next))

  const setPassphrase = async () => {
    checkMaster()
    setFieldError(next, backupPassphraseProblem(next.value)?.replace(/^a/, 'A'))
    setFieldError(repeat, repeat.value === next.value ? undefined : 'The two backup passphrases differ.')
    refuseIfInvalid(form)
    const chosen = next.value
    next.value = repeat.value = ''
    next.dispatchEvent(new Event('input'))
    await asMaster(ctx, master, (s) => setBackupPassphrase(s, chosen)).catch(inBackupWords)
    return 'The backup passphrase is set.'
  }

  const makeBackup = async () => {
    checkMaster()
    for (const input of [next, repeat]) setFieldError(input, undefined)
    refuseIfInvalid(form)
    progress.reset()
    const file = await asMaster(ctx, master, (s) =>
      s.authorized(BACKUP_SCOPE, (token) => download(token, progress)),
    ).catch(inBackupWords)
    if (link) URL.revokeObjectURL(link)
    link = URL.createObjectURL(file)
    saved.replaceChildren(h('a', { href: link, download: file.name }, `Save ${file.name} (${file.size} bytes)`))
    return 'The backup is made.'
  }

  const run = (doing: string, action: () => Promise<string>) => () => void ctx.feedback.run(doing, action)
  const form = h(
    'form',
    { 'aria-labelledby': 'backup-title', novalidate: true, onsubmit: (event) => event.preventDefault() },
    h('h3', { id: 'backup-title' }, 'Backup'),
    h('p', { class: 'hint' }, 'Keys and configuration, sealed under the backup passphrase, for a fresh device.'),
    needsMaster && field('Master passphrase', master),
    newField,
    field('Repeat the backup passphrase', repeat),
    h(
      'button',
      { type: 'button', onclick: run('Setting the backup passphrase…', setPassphrase) },
      'Set the backup passphrase',
    ),
    h('button', { type: 'button', onclick: run('Making a backup…', makeBackup) }, 'Download a backup'),
    progress.element,
    saved,
  )
  return refusedOverPlainHttp(form)
}
