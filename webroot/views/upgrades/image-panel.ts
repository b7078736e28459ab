// One kind of image from file to installed: pick, upload (with its progress), check, install.
import { deviceRequest, DeviceError } from '../../device-session.js'
import { h, field, uid } from '../../dom.js'
import { InputError } from '../../feedback.js'
import { followRestart } from '../../follow-restart.js'
import type { AppContext } from '../../view.js'
import { checkStaged } from './check-staged.js'
import {
  describeClaims,
  KIND_NAMES,
  MAX_IMAGE_BYTES,
  readImageClaims,
  type ImageClaims,
  type ImageKind,
} from './image-file.js'
import { uploadImage } from './upload-image.js'

const SCOPE = 'system:upgrade'

/** Per kind: the name in the panel's controls, and how an image of it is made. */
const PANEL: Record<ImageKind, { title: string; word: string; made: string }> = {
  fw: { title: 'Firmware', word: 'firmware', made: 'hem-image build --kind fw' },
  ui: { title: 'Management app', word: 'app', made: 'hem-image build --kind ui (npm run image)' },
}

export interface PanelHooks {
  /** The versions the device reports changed: show them again. */
  versionsChanged(): Promise<void>
}

export function imagePanel(kind: ImageKind, ctx: AppContext, hooks: PanelHooks): HTMLElement {
  const { title, word, made } = PANEL[kind]
  const { feedback, session } = ctx
  const input = h('input', { type: 'file', accept: '.bin,.img,.tar,application/octet-stream' })
  const fileField = field(
    `${title} image`,
    input,
    `A signed ${KIND_NAMES[kind]} image (${made}), at most 16 MiB (${MAX_IMAGE_BYTES} bytes).`,
  )
  const fileMessage = h('p', { id: uid('file-message'), class: 'field-message' })
  input.setAttribute('aria-describedby', `${input.getAttribute('aria-describedby')} ${fileMessage.id}`)
  fileField.append(fileMessage)

  const progress = h('progress', { id: uid('progress'), max: 1, value: 0 })
  const progressText = h('span', { class: 'progress-text' }, 'Nothing sent yet.')
  const verdict = h('p', { class: 'verdict' }, 'Not checked yet.')
  const after = h('div', { class: 'after-install' })
  const downgrade = h('input', { type: 'checkbox' })
  let uploading: AbortController | undefined
  let uploaded: ImageClaims | undefined
  const cancel = h(
    'button',
    { type: 'button', disabled: true, onclick: () => uploading?.abort() },
    `Cancel the ${word} upload`,
  )

  /** The picked file's claims, shown beside the field; an InputError (shown there too) when it is no image of
   * this kind. */
  const claims = async (): Promise<{ file: File; claims: ImageClaims }> => {
    const file = input.files?.[0]
    try {
      if (!file) throw new InputError(`Pick a ${word} image file first.`)
      const read = await readImageClaims(file, kind)
      input.removeAttribute('aria-invalid')
      fileMessage.classList.remove('invalid')
      const claimed = describeClaims(read)
      fileMessage.textContent = `${file.name}, ${file.size} bytes, claims ${claimed}; the device's check verifies it.`
      return { file, claims: read }
    } catch (error) {
      input.setAttribute('aria-invalid', 'true')
      fileMessage.classList.add('invalid')
      fileMessage.textContent = error instanceof Error ? error.message : String(error)
      throw error
    }
  }

  input.addEventListener('change', () => {
    progress.value = 0
    progressText.textContent = 'Nothing sent yet.'
    void claims().catch(() => undefined)
  })

  const showProgress = (sent: number, total: number) => {
    progress.max = Math.max(total, 1)
    progress.value = sent
    const percent = Math.floor((sent * 100) / Math.max(total, 1))
    progressText.textContent = `${sent} of ${total} bytes (${percent} %)`
  }

  const upload = () =>
    feedback.run(`Uploading the ${word} image…`, async () => {
      const picked = await claims()
      uploaded = undefined
      verdict.textContent = 'Not checked yet.'
      uploading = new AbortController()
      cancel.disabled = false
      showProgress(0, picked.file.size)
      let shownStep = -1
      try {
        await session.authorized(SCOPE, (token) =>
          uploadImage(kind, picked.file, token, {
            signal: uploading!.signal,
            onProgress(sent, total) {
              showProgress(sent, total)
              // The status line in tenths: a screen reader need not hear every event.
              const step = Math.floor((sent * 10) / Math.max(total, 1))
              if (step !== shownStep) feedback.progress(`Uploading the ${word} image… ${step * 10} %`)
              shownStep = step
            },
          }),
        )
      } finally {
        uploading = undefined
        cancel.disabled = true
      }
      showProgress(picked.file.size, picked.file.size)
      uploaded = picked.claims
      return `Uploaded ${describeClaims(picked.claims)}. Check it next.`
    })

  const check = () =>
    feedback.run(`Checking the ${word} image…`, async () => {
      verdict.textContent = 'Checking…'
      try {
        await checkStaged(kind, session, (seconds) => feedback.progress(`Checking the ${word} image… (${seconds} s)`))
      } catch (error) {
        verdict.textContent =
          error instanceof DeviceError && error.status === 406
            ? `Rejected: ${error.message}.`
            : 'Not checked: see the error above.'
        throw error
      }
      const what = uploaded ? describeClaims(uploaded) : `the staged ${word} image`
      verdict.textContent = `Verified: ${what}, signed by the vendor, whole, and made for this device.`
      return `The ${word} image is verified: install it when you are ready.`
    })

  const installFirmware = () =>
    feedback.run('Installing the firmware…', async () => {
      const { uptime } = await ctx.status()
      const path = '/api/system/upgrade/install_fw'
      // POST with the owner's confirmation, which only an older version at the floor needs.
      await session.authorized(SCOPE, (token) =>
        downgrade.checked
          ? deviceRequest(path, { token, body: { allow_downgrade: true } })
          : deviceRequest(path, { token }),
      )
      feedback.progress('The firmware is installed; the device restarts into it…')
      await followRestart(feedback, uptime)
      await ctx.status()
      await hooks.versionsChanged()
      const { fwv } = (await deviceRequest('/api/system/version')) as { fwv: string }
      const wanted = uploaded?.version
      uploaded = undefined
      // The confirmation was for this image only.
      downgrade.checked = false
      verdict.textContent = 'Not checked yet.'
      return wanted === undefined || wanted === fwv
        ? `The device is back, running firmware ${fwv}.`
        : `The device is back, running firmware ${fwv}, not the installed ${wanted}: ` +
            'a firmware that fails its trial boot is rolled back (the audit log says why), ' +
            'and a device without its launcher boots it at its next start.'
    })

  const installApp = () =>
    feedback.run('Installing the management app…', async () => {
      await session.authorized(SCOPE, (token) => deviceRequest('/api/system/upgrade/install_ui', { token }))
      uploaded = undefined
      verdict.textContent = 'Not checked yet.'
      await hooks.versionsChanged()
      after.replaceChildren(
        h('p', {}, 'The new management app is installed. This page still runs the old one until you reload it.'),
        h('button', { type: 'button', onclick: () => location.reload() }, 'Reload the app'),
      )
      return 'The new management app is installed: reload to use it (you log in again).'
    })

  const titleId = uid('panel-title')
  return h(
    'section',
    { class: 'upgrade-panel', 'aria-labelledby': titleId },
    h('h3', { id: titleId }, title),
    fileField,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', onclick: () => void upload() }, `Upload ${word}`),
      cancel,
    ),
    h('div', { class: 'field' }, h('label', { for: progress.id }, `${title} upload progress`), progress, progressText),
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => void check() }, `Check ${word}`)),
    verdict,
    kind === 'fw' &&
      field(
        'Allow a downgrade',
        downgrade,
        'Needed only for an older version at the same anti-rollback level; an image below that level never installs.',
      ),
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        { type: 'button', onclick: () => void (kind === 'fw' ? installFirmware() : installApp()) },
        `Install ${word}`,
      ),
    ),
    after,
  )
}
