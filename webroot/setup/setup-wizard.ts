// The set-up wizard of a fresh device (status `inited: false`), in place of the login, loaded once in a device's
// life (`import()`). Step 1 shows, before anything is typed, who the device is: its variant, devid and versions,
// its attestation checked here against the factory CA this app ships, and its TLS fingerprint to compare with
// its label or banner. Step 2 takes the owner and personalises the device as hemctl init does (client/'s own
// code), then logs in with the user passphrase's key; or it restores a backup instead (restore-step.ts). Over
// plain HTTP from another host it refuses at once.
import { derivePassphraseKeyAsync, personalise, type PassphraseKey } from '../../client/browser.js'
import { usableSectors } from '../../protocol/browser.js'
import { copyButton } from '../copy-button.js'
import { DeviceSession, deviceRequest, openDevice } from '../device-session.js'
import { h } from '../dom.js'
import type { Feedback } from '../feedback.js'
import { plainHttpRefusal } from '../plain-http.js'
import { servedCertificate } from '../served-certificate.js'
import type { DeviceStatus } from '../view.js'
import { checkAttestation, type AttestationVerdict } from './attestation-check.js'
import { readDeviceFacts, type DeviceFacts } from './device-facts.js'
import { factoryCa, type FactoryCa } from './factory-ca.js'
import { ownerForm } from './owner-form.js'
import { restoreStep } from './restore-step.js'

export interface SetupHooks {
  /** The login section: hidden while the wizard shows. */
  login: HTMLElement
  feedback: Feedback
  /** The scope the new owner's first login is for (the shell's). */
  scope: string
  /** Takes the new owner's session. */
  loggedIn(session: DeviceSession): void
}

const WIZARD_ID = 'setup'

/** Replaces any wizard shown before (a wipeout's return) with a new one, above the hidden login. */
export async function openSetupWizard(hooks: SetupHooks): Promise<void> {
  document.getElementById(WIZARD_ID)?.remove()
  const section = h(
    'section',
    { id: WIZARD_ID, 'aria-labelledby': 'setup-title' },
    h('h2', { id: 'setup-title', tabindex: '-1' }, 'Set up this device'),
  )
  hooks.login.before(section)
  hooks.login.hidden = true
  const refusal = await plainHttpRefusal()
  if (refusal) {
    section.append(refusal, h('p', {}, 'The set-up sends keys made from your passphrases: it needs HTTPS.'))
    return
  }
  // Not a feedback action: the wizard may open while one ends (the wipeout that brought it back).
  section.setAttribute('aria-busy', 'true')
  try {
    const [facts, served, status] = await Promise.all([
      readDeviceFacts(),
      servedCertificate(),
      deviceRequest('/api/system/status') as Promise<DeviceStatus>,
    ])
    const step1 = await deviceStep(facts, served.fingerprint)
    const choice = h('div', { class: 'actions' })
    const take = (step: () => HTMLElement, title: string) => () => {
      choice.remove()
      section.append(step())
      section.querySelector<HTMLElement>(title)?.focus()
    }
    const own = () => ownerStep(facts, usableSectors(status.storage), hooks, section)
    choice.append(
      h('button', { type: 'button', onclick: take(own, '#setup-owner-title') }, 'Next: make it yours'),
      h(
        'button',
        { type: 'button', onclick: take(() => restoreStep(hooks, section), '#setup-restore-title') },
        'Restore from a backup',
      ),
    )
    section.append(step1, choice)
  } catch (error) {
    hooks.feedback.fail(error)
  } finally {
    section.removeAttribute('aria-busy')
  }
  section.querySelector<HTMLElement>('#setup-title')?.focus()
}

async function deviceStep(facts: DeviceFacts, fingerprint: string): Promise<HTMLElement> {
  const variant =
    facts.variant === 'P'
      ? 'P: with disks and a secure enclave'
      : facts.variant === 'E'
        ? 'E: no disks, no enclave'
        : 'unknown'
  return h(
    'div',
    { class: 'setup-step' },
    h('h3', {}, 'Step 1 of 2: check the device'),
    h(
      'dl',
      { id: 'setup-device' },
      h('dt', {}, 'Variant'),
      h('dd', {}, `${variant} (hardware ${facts.hwv})`),
      h('dt', {}, 'Device id'),
      h('dd', {}, facts.devid),
      h('dt', {}, 'Firmware'),
      h('dd', {}, facts.firmware),
      h('dt', {}, 'Boot loader'),
      h('dd', {}, facts.bootloader),
      h('dt', {}, 'Management app'),
      h('dd', {}, facts.app ? `image SHA-256 ${facts.app}` : 'not named by the device'),
    ),
    h('h4', {}, 'Attestation: is it a genuine device?'),
    await attestationWords(facts),
    h('h4', {}, 'TLS certificate fingerprint (SHA-256)'),
    h('p', { id: 'setup-fingerprint', class: 'fingerprint' }, fingerprint),
    copyButton('Copy the fingerprint', () => fingerprint),
    h(
      'p',
      { class: 'hint' },
      "Compare it with the device's label, or the tls line hemd printed when it started. Compare it too with the " +
        "certificate your browser shows for this page (the padlock): a go-between could show the device's true " +
        'fingerprint here while serving your browser its own certificate.',
    ),
  )
}

async function attestationWords(facts: DeviceFacts): Promise<HTMLElement> {
  if (facts.variant !== 'P' || !facts.attestation)
    return verdictLine('neutral', 'No attestation: this variant has no secure enclave to vouch for it.')
  let ca: FactoryCa
  let verdict: AttestationVerdict
  try {
    ca = factoryCa()
    verdict = await checkAttestation(facts.attestation, facts.devid, ca, new Date())
  } catch (error) {
    return verdictLine('failed', `FAILED: the attestation could not be checked (${(error as Error).message}).`)
  }
  const development = ca.development
    ? [
        h(
          'p',
          { class: 'banner', id: 'setup-development-ca' },
          'This app checks against the development factory CA: its private key is published (deploy/keys/), so ' +
            'anyone can certify a device with it, and a "genuine" here proves nothing. An installation builds ' +
            'the app with its own factory CA.',
        ),
      ]
    : []
  const caName = ca.certificate.subject.text
  if (verdict.kind === 'genuine')
    return h(
      'div',
      {},
      verdictLine(
        'ok',
        `Genuine: the factory CA "${caName}" certifies this device's attestation key, and the factory's statement ` +
          `names this device (${facts.devid}), that key and its enclave ${verdict.genuineId}. ` +
          `The certificate is valid until ${verdict.validTo.toISOString().slice(0, 10)}.`,
      ),
      ...development,
    )
  if (verdict.kind === 'unprovisioned')
    return h(
      'div',
      {},
      verdictLine(
        'warn',
        `Not provisioned: the device vouches only for itself. Its own statement names this device (enclave ` +
          `${verdict.genuineId}), but no factory has certified its attestation key, so nothing shows where it was ` +
          'made. A device from the factory is provisioned before it ships: set this one up only if you know ' +
          'where it comes from.',
      ),
      ...development,
    )
  return h(
    'div',
    {},
    verdictLine(
      'failed',
      `FAILED: ${verdict.check}. Nothing shows this device is genuine: do not trust it with secrets until you ` +
        'know why.',
    ),
    ...development,
  )
}

function verdictLine(kind: 'ok' | 'warn' | 'failed' | 'neutral', words: string): HTMLElement {
  return h('p', { id: 'setup-attestation', class: `verdict ${kind}` }, words)
}

function ownerStep(facts: DeviceFacts, usable: number, hooks: SetupHooks, section: HTMLElement): HTMLElement {
  const form = ownerForm(facts.variant, usable, () => {
    void hooks.feedback.run('Setting up the device (deriving both keys takes a moment)…', async () => {
      const choice = form.take()
      // Out of the page at once: the keys derived from them are all that is kept, the user's alone after this.
      form.clearPassphrases()
      let userKey: PassphraseKey | undefined
      let masterKey: PassphraseKey | undefined
      const keys = async (eid: string) => {
        ;[userKey, masterKey] = await Promise.all([
          derivePassphraseKeyAsync(choice.user, eid),
          derivePassphraseKeyAsync(choice.master, eid),
        ])
        return { user: userKey, master: masterKey }
      }
      try {
        await personalise(openDevice, keys, choice.cfg, Math.floor(Date.now() / 1000))
      } finally {
        masterKey?.seed.fill(0)
      }
      hooks.feedback.progress('The device is yours. Logging in…')
      const session = await DeviceSession.withKey(userKey!, hooks.scope)
      section.remove()
      hooks.loggedIn(session)
      return `The device is yours, ${String(choice.cfg.user)}. Logged in with the user passphrase.`
    })
  })
  return form.element
}
