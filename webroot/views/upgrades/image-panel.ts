// One kind of image from file to installed: pick, upload (with its progress), check, install.
import { NotAcceptableError } from '../../../client/browser.js'
import { deviceRequest } from '../../device-session.js'
import { field, h, uid } from '../../dom.js'
import { followRestart } from '../../follow-restart.js'
import { refusalWords } from '../../refusal-words.js'
import { transferProgress, type TransferProgress } from '../../transfer-progress.js'
import { uploadFile } from '../../upload-file.js'
import type { AppContext } from '../../view.js'
import { checkStaged } from './check-staged.js'
import { describeClaims, type ImageClaims, type ImageKind } from './image-file.js'
import { imagePicker, type ImagePicker, type KindNames } from './image-picker.js'

const SCOPE = 'system:upgrade'

/** The names the family's clients send (Content-Disposition), as the gateway expects them. */
const FILENAMES: Record<ImageKind, string> = { fw: 'firmware.bin', ui: 'webroot.tar' }

/** Per kind: the name in the panel's controls, and how an image of it is made. */
const PANEL: Record<ImageKind, KindNames> = {
  fw: { title: 'Firmware', word: 'firmware', made: 'hem-image build --kind fw' },
  ui: { title: 'Management app', word: 'app', made: 'hem-image build --kind ui (npm run image)' },
}

export interface PanelHooks {
  /** The versions the device reports changed: show them again. */
  versionsChanged(): Promise<void>
}

/** What the panel's actions share: its parts, the upload running and the image uploaded from it. */
interface Panel {
  readonly kind: ImageKind
  readonly word: string
  readonly ctx: AppContext
  readonly hooks: PanelHooks
  readonly picker: ImagePicker
  readonly progress: TransferProgress
  readonly cancel: HTMLButtonElement
  readonly verdict: HTMLElement
  readonly downgrade: HTMLInputElement
  readonly after: HTMLElement
  uploading?: AbortController
  uploaded?: ImageClaims
}

export function imagePanel(kind: ImageKind, ctx: AppContext, hooks: PanelHooks): HTMLElement {
  const { title, word } = PANEL[kind]
  const progress = transferProgress(`${title} upload progress`)
  const panel: Panel = {
    kind,
    word,
    ctx,
    hooks,
    picker: imagePicker(kind, PANEL[kind], () => progress.reset()),
    progress,
    cancel: h(
      'button',
      { type: 'button', disabled: true, onclick: () => panel.uploading?.abort() },
      `Cancel the ${word} upload`,
    ),
    verdict: h('p', { class: 'verdict' }, NOT_CHECKED),
    downgrade: h('input', { type: 'checkbox' }),
    after: h('div', { class: 'after-install' }),
  }
  const button = (label: string, action: (panel: Panel) => Promise<boolean>) =>
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => void action(panel) }, label))
  const titleId = uid('panel-title')
  return h(
    'section',
    { class: 'upgrade-panel', 'aria-labelledby': titleId },
    h('h3', { id: titleId }, title),
    panel.picker.element,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', onclick: () => void upload(panel) }, `Upload ${word}`),
      panel.cancel,
    ),
    progress.element,
    button(`Check ${word}`, check),
    panel.verdict,
    kind === 'fw' &&
      field(
        'Allow a downgrade',
        panel.downgrade,
        'Needed only for an older version at the same anti-rollback level; an image below that level never installs.',
      ),
    button(`Install ${word}`, kind === 'fw' ? installFirmware : installApp),
    panel.after,
  )
}

const NOT_CHECKED = 'Not checked yet.'

/** The verdict line, styled by what it says: only a passed check looks like a success. */
function showVerdict(verdict: HTMLElement, state: 'pending' | 'verified' | 'failed', text: string): void {
  verdict.className = state === 'pending' ? 'verdict' : `verdict ${state}`
  verdict.textContent = text
}

function upload(panel: Panel): Promise<boolean> {
  const { feedback, session } = panel.ctx
  return feedback.run(`Uploading the ${panel.word} image…`, async () => {
    const { file, claims } = await panel.picker.picked()
    panel.uploaded = undefined
    showVerdict(panel.verdict, 'pending', NOT_CHECKED)
    const uploading = (panel.uploading = new AbortController())
    panel.cancel.disabled = false
    panel.progress.show(0, file.size)
    let shownStep = -1
    try {
      await session.authorized(SCOPE, (token) =>
        uploadFile(`/api/system/upgrade/upload_${panel.kind}`, FILENAMES[panel.kind], file, token, {
          signal: uploading.signal,
          onProgress(sent, total) {
            panel.progress.show(sent, total)
            // The status line in tenths: a screen reader need not hear every event.
            const step = Math.floor((sent * 10) / Math.max(total, 1))
            if (step !== shownStep) feedback.progress(`Uploading the ${panel.word} image… ${step * 10} %`)
            shownStep = step
          },
        }),
      )
    } finally {
      panel.uploading = undefined
      panel.cancel.disabled = true
    }
    panel.progress.show(file.size, file.size)
    panel.uploaded = claims
    return `Uploaded ${describeClaims(claims)}. Check it next.`
  })
}

function check(panel: Panel): Promise<boolean> {
  const { feedback, session } = panel.ctx
  const { kind, word, verdict } = panel
  return feedback.run(`Checking the ${word} image…`, async () => {
    showVerdict(verdict, 'pending', 'Checking…')
    try {
      await checkStaged(kind, session, (seconds) => feedback.progress(`Checking the ${word} image… (${seconds} s)`))
    } catch (error) {
      if (error instanceof NotAcceptableError) showVerdict(verdict, 'failed', `Rejected: ${refusalWords(error)}.`)
      else showVerdict(verdict, 'pending', 'Not checked: see the error above.')
      throw error
    }
    const what = panel.uploaded ? describeClaims(panel.uploaded) : `the staged ${word} image`
    showVerdict(verdict, 'verified', `Verified: ${what}, signed by the vendor, whole, and made for this device.`)
    return `The ${word} image is verified: install it when you are ready.`
  })
}

function installFirmware(panel: Panel): Promise<boolean> {
  const { ctx, downgrade } = panel
  return ctx.feedback.run('Installing the firmware…', async () => {
    const { uptime } = await ctx.status()
    const path = '/api/system/upgrade/install_fw'
    // POST with the owner's confirmation, which only an older version at the floor needs.
    await ctx.session.authorized(SCOPE, (token) =>
      downgrade.checked
        ? deviceRequest(path, { token, body: { allow_downgrade: true } })
        : deviceRequest(path, { token }),
    )
    ctx.feedback.progress('The firmware is installed; the device restarts into it…')
    await followRestart(ctx.feedback, uptime)
    await ctx.status()
    await panel.hooks.versionsChanged()
    const { fwv } = (await deviceRequest('/api/system/version')) as { fwv: string }
    const wanted = panel.uploaded?.version
    panel.uploaded = undefined
    // The confirmation was for this image only.
    downgrade.checked = false
    showVerdict(panel.verdict, 'pending', NOT_CHECKED)
    return wanted === undefined || wanted === fwv
      ? `The device is back, running firmware ${fwv}.`
      : `The device is back, running firmware ${fwv}, not the installed ${wanted}: ` +
          'a firmware that fails its trial boot is rolled back (the audit log says why), ' +
          'and a device without its launcher boots it at its next start.'
  })
}

function installApp(panel: Panel): Promise<boolean> {
  const { ctx } = panel
  return ctx.feedback.run('Installing the management app…', async () => {
    await ctx.session.authorized(SCOPE, (token) => deviceRequest('/api/system/upgrade/install_ui', { token }))
    panel.uploaded = undefined
    showVerdict(panel.verdict, 'pending', NOT_CHECKED)
    await panel.hooks.versionsChanged()
    panel.after.replaceChildren(
      h('p', {}, 'The new management app is installed. This page still runs the old one until you reload it.'),
      h('button', { type: 'button', onclick: () => location.reload() }, 'Reload the app'),
    )
    return 'The new management app is installed: reload to use it (you log in again).'
  })
}
