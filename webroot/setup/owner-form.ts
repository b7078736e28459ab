// The set-up wizard's second step: the owner, both passphrases (each typed twice, with a strength meter), the host
// name and the allowed origin, and on P the network and disks behind "Advanced", with hemctl init's defaults.
// Every field is checked as it is typed, by the device's own rules (protocol/config-field-rules.ts) and the
// app's, and marked on the field; nothing is taken while one is wrong.
import {
  CONFIG_FIELD_RULES,
  DEFAULT_HOSTNAME,
  INIT_FIXED_CHOICES,
  P_INIT_DEFAULTS,
  STORAGE_MODES,
  type ConfigRuleField,
} from '../../protocol/browser.js'
import { field, h, select } from '../dom.js'
import { refuseIfInvalid, setFieldError } from '../field-error.js'
import { EDITABLE_FIELDS, storageModeWords } from '../views/settings/config-fields.js'
import { MIN_PASSPHRASE_CHARACTERS } from '../views/settings/passphrase-form.js'
import { strengthMeter } from './passphrase-strength.js'

/** What the owner chose: the passphrases (to be derived at once and forgotten) and the configuration to sign. */
export interface OwnerChoice {
  user: string
  master: string
  cfg: Record<string, unknown>
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const ANY_ORIGIN =
  'Not * here: it lets every web page you visit call the routes of the device that need no login. ' +
  "Keep this page's origin; the configuration can change it later."

const sentence = (what: string) => `${what[0]!.toUpperCase()}${what.slice(1)}.`
const text = (name: string, value: string, autocomplete: string) =>
  h('input', { type: 'text', name, value, autocomplete, spellcheck: 'false' })
const password = (name: string) =>
  h('input', { type: 'password', name, autocomplete: 'new-password', spellcheck: 'false' })

/** A check of one control: the reason it is wrong, or undefined. */
type Check = () => string | undefined

/** The device's rule for `name` over `value`, as a sentence when it fails. */
function ruleProblem(name: ConfigRuleField, value: unknown, usable: number): string | undefined {
  const rule = CONFIG_FIELD_RULES[name]
  return rule.valid(value, usable) ? undefined : sentence(rule.what(usable))
}

const labelOf = (name: ConfigRuleField) => EDITABLE_FIELDS.find((spec) => spec.name === name)?.label ?? name

export interface OwnerForm {
  element: HTMLFormElement
  /** Checks every field, marks the wrong ones and throws InputError when one is; else what was typed. */
  take(): OwnerChoice
  /** Empties the passphrase fields: they are read once. */
  clearPassphrases(): void
}

/**
 * The form; `variant` P adds the disks and network, `usable` bounds Disk 0 (the sectors both disks share).
 * `submit` runs on the form's submit.
 */
export function ownerForm(variant: 'P' | 'E' | undefined, usable: number, submit: () => void): OwnerForm {
  const user = text('user', '', 'name')
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'email', spellcheck: 'false' })
  const userPass = password('user-passphrase')
  const userRepeat = password('user-passphrase-repeat')
  const masterPass = password('master-passphrase')
  const masterRepeat = password('master-passphrase-repeat')
  const hostname = text('hostname', DEFAULT_HOSTNAME, 'off')
  const origin = text('origin', location.origin, 'off')
  const ip = text('ip', P_INIT_DEFAULTS.ip, 'off')
  const storageMode = select(
    'storage_mode',
    STORAGE_MODES.map((mode) => [String(mode), storageModeWords(mode)] as const),
    String(P_INIT_DEFAULTS.storage_mode),
  )
  const disk0 = text('storage_disk0size', String(P_INIT_DEFAULTS.storage_disk0size), 'off')
  disk0.setAttribute('inputmode', 'numeric')
  const p = variant === 'P'

  const passphraseProblem = (input: HTMLInputElement) =>
    [...input.value].length < MIN_PASSPHRASE_CHARACTERS
      ? `At least ${MIN_PASSPHRASE_CHARACTERS} characters.`
      : undefined
  const checks = new Map<HTMLElement, Check>([
    [user, () => (user.value.trim() === '' ? 'Give the owner a name.' : ruleProblem('user', user.value, usable))],
    [
      email,
      () =>
        ruleProblem('email', email.value, usable) ??
        (EMAIL.test(email.value) ? undefined : 'An e-mail address, like ada@example.com.'),
    ],
    [userPass, () => passphraseProblem(userPass)],
    [userRepeat, () => (userRepeat.value === userPass.value ? undefined : 'The two user passphrases differ.')],
    [
      masterPass,
      () =>
        passphraseProblem(masterPass) ??
        (masterPass.value === userPass.value
          ? 'The master passphrase must differ from the user passphrase.'
          : undefined),
    ],
    [masterRepeat, () => (masterRepeat.value === masterPass.value ? undefined : 'The two master passphrases differ.')],
    [hostname, () => ruleProblem('hostname', hostname.value, usable)],
    [origin, () => (origin.value.trim() === '*' ? ANY_ORIGIN : ruleProblem('origin', origin.value, usable))],
    ...(p
      ? ([
          [ip, () => ruleProblem('ip', ip.value, usable)],
          [
            disk0,
            () => ruleProblem('storage_disk0size', /^\d+$/.test(disk0.value) ? Number(disk0.value) : NaN, usable),
          ],
        ] as [HTMLElement, Check][])
      : []),
  ])
  // A field's check runs again when one it is compared with changes.
  const dependants = new Map<HTMLElement, HTMLElement[]>([
    [userPass, [userRepeat, masterPass]],
    [masterPass, [masterRepeat]],
  ])
  const check = (control: HTMLElement) => setFieldError(control, checks.get(control)?.())
  for (const control of checks.keys())
    control.addEventListener('input', () => {
      check(control)
      for (const other of dependants.get(control) ?? []) if ((other as HTMLInputElement).value) check(other)
    })

  const passphraseFields = (
    whose: 'user' | 'master',
    input: HTMLInputElement,
    repeat: HTMLInputElement,
    hint: string,
  ) => {
    const first = field(`${whose === 'user' ? 'User' : 'Master'} passphrase`, input, hint)
    first.append(strengthMeter(input))
    return [first, field(`Repeat the ${whose} passphrase`, repeat)]
  }

  const element = h(
    'form',
    {
      'aria-labelledby': 'setup-owner-title',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault()
        submit()
      },
    },
    h('h3', { id: 'setup-owner-title', tabindex: '-1' }, 'Step 2 of 2: make it yours'),
    field(labelOf('user'), user, `${sentence(CONFIG_FIELD_RULES.user.what(usable))} Shown to whoever logs in.`),
    field(labelOf('email'), email, 'An address to reach the owner at.'),
    ...passphraseFields(
      'user',
      userPass,
      userRepeat,
      `For everyday use: logging in, keys, settings. At least ${MIN_PASSPHRASE_CHARACTERS} characters; ` +
        'several words are best.',
    ),
    ...passphraseFields(
      'master',
      masterPass,
      masterRepeat,
      'For the owner alone, kept apart: it signs this set-up and can replace the user passphrase. ' +
        'It must differ from the user passphrase. Write it down and keep it safe: nobody can recover it.',
    ),
    field(
      'Host name',
      hostname,
      `${sentence(CONFIG_FIELD_RULES.hostname.what(usable))} Fixed from now on; the device answers to it.`,
    ),
    field(
      'Allowed web origin (CORS)',
      origin,
      "Pages of this origin may call the device, besides its own. This page's own by default; never *.",
    ),
    p &&
      h(
        'details',
        { class: 'advanced' },
        h('summary', {}, 'Advanced: network and disks'),
        field('IP address', ip, `${sentence(CONFIG_FIELD_RULES.ip.what(usable))} Fixed from now on.`),
        field(labelOf('storage_mode'), storageMode, 'How Disk 0 starts, and the cipher of Disk 1.'),
        field(
          labelOf('storage_disk0size'),
          disk0,
          `${sentence(CONFIG_FIELD_RULES.storage_disk0size.what(usable))} Disk 1 gets the rest.`,
        ),
      ),
    h('button', { type: 'submit' }, 'Set up the device'),
  )

  return {
    element,
    take() {
      for (const control of checks.keys()) check(control)
      // A wrong field hidden under Advanced is shown, so that the focus can reach it.
      const advanced = element.querySelector('details')
      if (advanced && advanced.querySelector('[aria-invalid="true"]')) advanced.open = true
      refuseIfInvalid(element)
      return {
        user: userPass.value,
        master: masterPass.value,
        cfg: {
          user: user.value,
          email: email.value,
          hostname: hostname.value,
          origin: origin.value,
          ...INIT_FIXED_CHOICES,
          ...(p
            ? {
                ip: ip.value,
                storage_mode: Number(storageMode.value),
                storage_disk0size: Number(disk0.value),
                dnsd: P_INIT_DEFAULTS.dnsd,
              }
            : {}),
        },
      }
    },
    clearPassphrases() {
      for (const input of [userPass, userRepeat, masterPass, masterRepeat]) {
        input.value = ''
        // The meters follow; the fields are not wrong for being emptied by the page.
        input.dispatchEvent(new Event('input'))
        setFieldError(input, undefined)
      }
    },
  }
}
