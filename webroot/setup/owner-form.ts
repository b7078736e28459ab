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
import { field, h, select, type Child } from '../dom.js'
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

/** The form's controls, with their defaults. */
function ownerControls() {
  const disk0 = text('storage_disk0size', String(P_INIT_DEFAULTS.storage_disk0size), 'off')
  disk0.setAttribute('inputmode', 'numeric')
  return {
    user: text('user', '', 'name'),
    email: h('input', { type: 'email', name: 'email', autocomplete: 'email', spellcheck: 'false' }),
    userPass: password('user-passphrase'),
    userRepeat: password('user-passphrase-repeat'),
    masterPass: password('master-passphrase'),
    masterRepeat: password('master-passphrase-repeat'),
    hostname: text('hostname', DEFAULT_HOSTNAME, 'off'),
    origin: text('origin', location.origin, 'off'),
    ip: text('ip', P_INIT_DEFAULTS.ip, 'off'),
    storageMode: select(
      'storage_mode',
      STORAGE_MODES.map((mode) => [String(mode), storageModeWords(mode)] as const),
      String(P_INIT_DEFAULTS.storage_mode),
    ),
    disk0,
  }
}

type Controls = ReturnType<typeof ownerControls>

const passphraseProblem = (input: HTMLInputElement) =>
  [...input.value].length < MIN_PASSPHRASE_CHARACTERS ? `At least ${MIN_PASSPHRASE_CHARACTERS} characters.` : undefined

/** Each control's check: the device's rule, then the app's; P's network and disks only on P. */
function ownerChecks(c: Controls, p: boolean, usable: number): Map<HTMLElement, Check> {
  const disk0 = () => (/^\d+$/.test(c.disk0.value) ? Number(c.disk0.value) : NaN)
  return new Map<HTMLElement, Check>([
    [c.user, () => (c.user.value.trim() === '' ? 'Give the owner a name.' : ruleProblem('user', c.user.value, usable))],
    [
      c.email,
      () =>
        ruleProblem('email', c.email.value, usable) ??
        (EMAIL.test(c.email.value) ? undefined : 'An e-mail address, like ada@example.com.'),
    ],
    [c.userPass, () => passphraseProblem(c.userPass)],
    [c.userRepeat, () => (c.userRepeat.value === c.userPass.value ? undefined : 'The two user passphrases differ.')],
    [
      c.masterPass,
      () =>
        passphraseProblem(c.masterPass) ??
        (c.masterPass.value === c.userPass.value
          ? 'The master passphrase must differ from the user passphrase.'
          : undefined),
    ],
    [
      c.masterRepeat,
      () => (c.masterRepeat.value === c.masterPass.value ? undefined : 'The two master passphrases differ.'),
    ],
    [c.hostname, () => ruleProblem('hostname', c.hostname.value, usable)],
    [c.origin, () => (c.origin.value.trim() === '*' ? ANY_ORIGIN : ruleProblem('origin', c.origin.value, usable))],
    ...(p
      ? ([
          [c.ip, () => ruleProblem('ip', c.ip.value, usable)],
          [c.disk0, () => ruleProblem('storage_disk0size', disk0(), usable)],
        ] as [HTMLElement, Check][])
      : []),
  ])
}

function passphraseFields(whose: 'user' | 'master', input: HTMLInputElement, repeat: HTMLInputElement, hint: string) {
  const first = field(`${whose === 'user' ? 'User' : 'Master'} passphrase`, input, hint)
  first.append(strengthMeter(input))
  return [first, field(`Repeat the ${whose} passphrase`, repeat)]
}

/** The fields in their order, with their hints. */
function ownerFields(c: Controls, p: boolean, usable: number): Child[] {
  return [
    field(labelOf('user'), c.user, `${sentence(CONFIG_FIELD_RULES.user.what(usable))} Shown to whoever logs in.`),
    field(labelOf('email'), c.email, 'An address to reach the owner at.'),
    ...passphraseFields(
      'user',
      c.userPass,
      c.userRepeat,
      `For everyday use: logging in, keys, settings. At least ${MIN_PASSPHRASE_CHARACTERS} characters; ` +
        'several words are best.',
    ),
    ...passphraseFields(
      'master',
      c.masterPass,
      c.masterRepeat,
      'For the owner alone, kept apart: it signs this set-up and can replace the user passphrase. ' +
        'It must differ from the user passphrase. Write it down and keep it safe: nobody can recover it.',
    ),
    field(
      'Host name',
      c.hostname,
      `${sentence(CONFIG_FIELD_RULES.hostname.what(usable))} Fixed from now on; the device answers to it.`,
    ),
    field(
      'Allowed web origin (CORS)',
      c.origin,
      "Pages of this origin may call the device, besides its own. This page's own by default; never *.",
    ),
    p &&
      h(
        'details',
        { class: 'advanced' },
        h('summary', {}, 'Advanced: network and disks'),
        field('IP address', c.ip, `${sentence(CONFIG_FIELD_RULES.ip.what(usable))} Fixed from now on.`),
        field(labelOf('storage_mode'), c.storageMode, 'How Disk 0 starts, and the cipher of Disk 1.'),
        field(
          labelOf('storage_disk0size'),
          c.disk0,
          `${sentence(CONFIG_FIELD_RULES.storage_disk0size.what(usable))} Disk 1 gets the rest.`,
        ),
      ),
  ]
}

/** The configuration to sign, as hemctl init makes it. */
function cfgOf(c: Controls, p: boolean): Record<string, unknown> {
  return {
    user: c.user.value,
    email: c.email.value,
    hostname: c.hostname.value,
    origin: c.origin.value,
    ...INIT_FIXED_CHOICES,
    ...(p
      ? {
          ip: c.ip.value,
          storage_mode: Number(c.storageMode.value),
          storage_disk0size: Number(c.disk0.value),
          dnsd: P_INIT_DEFAULTS.dnsd,
        }
      : {}),
  }
}

/**
 * The form; `variant` P adds the disks and network, `usable` bounds Disk 0 (the sectors both disks share).
 * `submit` runs on the form's submit.
 */
export function ownerForm(variant: 'P' | 'E' | undefined, usable: number, submit: () => void): OwnerForm {
  const c = ownerControls()
  const p = variant === 'P'
  const checks = ownerChecks(c, p, usable)
  // A field's check runs again when one it is compared with changes.
  const dependants = new Map<HTMLElement, HTMLInputElement[]>([
    [c.userPass, [c.userRepeat, c.masterPass]],
    [c.masterPass, [c.masterRepeat]],
  ])
  const check = (control: HTMLElement) => setFieldError(control, checks.get(control)?.())
  for (const control of checks.keys())
    control.addEventListener('input', () => {
      check(control)
      for (const other of dependants.get(control) ?? []) if (other.value) check(other)
    })
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
    ...ownerFields(c, p, usable),
    h('button', { type: 'submit' }, 'Set up the device'),
  )
  return {
    element,
    take() {
      for (const control of checks.keys()) check(control)
      // A wrong field hidden under Advanced is shown, so that the focus can reach it.
      const advanced = element.querySelector('details')
      if (advanced?.querySelector('[aria-invalid="true"]')) advanced.open = true
      refuseIfInvalid(element)
      return { user: c.userPass.value, master: c.masterPass.value, cfg: cfgOf(c, p) }
    },
    clearPassphrases() {
      for (const input of [c.userPass, c.userRepeat, c.masterPass, c.masterRepeat]) {
        input.value = ''
        // The meters follow; the fields are not wrong for being emptied by the page.
        input.dispatchEvent(new Event('input'))
        setFieldError(input, undefined)
      }
    },
  }
}
