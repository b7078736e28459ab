// The three ways to a new key: create it in the device, import a public key, derive one from an
// ECDH. Each form is a panel the screen's actions open, checks the contract's rules before it sends
// anything, and starts afresh once its key is made.
import { h, uid } from '../../dom.js'
import { InputError } from '../../feedback.js'
import { toBase64, type KeyEntry } from '../../../client/browser.js'
import { keyTypes, normaliseKid, type KeyType } from '../../../protocol/browser.js'
import { checkAll, checkedField, type CheckedField } from './checked-field.js'
import { keySpecFields, type KeySpecFields } from './key-spec-fields.js'
import { kidProblem, listedParts } from './key-text.js'
import { typeName } from './key-type-words.js'
import { deviceKeys, kidPicker } from './kid-picker.js'
import type { KeysScreen } from './keys-screen.js'
import { importLengths, isPublicKeyType, readPublicKey, type PublicKeyType } from './public-key-pem.js'

const ALL_TYPES = Object.keys(keyTypes) as KeyType[]
const PUBLIC_KEY_TYPES = ALL_TYPES.filter(isPublicKeyType)
const DERIVABLE_TYPES = ALL_TYPES.filter((type) => 'derived' in keyTypes[type])
const ECDH_TYPES = PUBLIC_KEY_TYPES.filter((type) => ['ecdh', 'ec'].includes(keyTypes[type].kind))

/** The label the device answers with is the label sent; the KID is the device's. */
type Answer = { kid: string }

/** A form under its heading, hidden until its action opens it. */
function panel(title: string, form: HTMLFormElement): HTMLElement {
  const heading = h('h3', { id: uid('new-key') }, title)
  return h('section', { class: 'key-form', 'aria-labelledby': heading.id, hidden: true }, heading, form)
}

/** The form back as it was first shown; the type's change event shows or hides the mode again. */
function resetForm(form: HTMLFormElement, spec: KeySpecFields): void {
  form.reset()
  spec.type.dispatchEvent(new Event('change'))
}

function form(submit: string, rows: HTMLElement[], onsubmit: () => void): HTMLFormElement {
  return h(
    'form',
    {
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault()
        onsubmit()
      },
    },
    ...rows,
    h('button', { type: 'submit' }, submit),
  )
}

/** Why these public key bytes cannot be a key of `types` (by length), or undefined. */
function lengthProblem(bytes: Uint8Array, types: readonly PublicKeyType[], what: string): string | undefined {
  if (types.some((type) => importLengths(type).includes(bytes.length))) return undefined
  const lengths = types.map((type) => `${importLengths(type).join(' or ')} bytes for ${typeName(type)}`).join(', ')
  return `${what} has ${bytes.length} bytes; the device takes ${lengths}.`
}

function publicKeyProblem(text: string, types: readonly PublicKeyType[], what: string): string | undefined {
  try {
    const { type, bytes } = readPublicKey(text)
    if (type && !types.includes(type))
      return `${what} is of type ${typeName(type)}; ${types.map(typeName).join(' or ')} is needed here.`
    return lengthProblem(bytes, type ? [type] : types, what)
  } catch (error) {
    return (error as Error).message
  }
}

const publicKeyArea = () => h('textarea', { name: 'pubkey', rows: 4, spellcheck: 'false', autocomplete: 'off' })

export function createForm(screen: KeysScreen): HTMLElement {
  const spec = keySpecFields(ALL_TYPES)
  const created = form('Create key', spec.rows, () => void create(screen, spec, created))
  return panel('Create a key', created)
}

function create(screen: KeysScreen, spec: KeySpecFields, created: HTMLFormElement) {
  return screen.run('Creating the key…', async () => {
    checkAll(spec.checked)
    const body = spec.body()
    const { kid } = (await screen.ctx.session.request('/api/keymgmt/create', 'keymgmt:gen', { body })) as Answer
    resetForm(created, spec)
    await screen.added(kid)
    return `Created the ${typeName(body.type)} key “${body.label}”, KID ${kid}.`
  })
}

export function importForm(screen: KeysScreen): HTMLElement {
  const spec = keySpecFields(PUBLIC_KEY_TYPES)
  const selected = () => [spec.type.value as PublicKeyType]
  const pubkey = checkedField(
    'Public key',
    publicKeyArea(),
    'A PEM public key (-----BEGIN PUBLIC KEY-----), or the raw key in base64: X25519 32 bytes, X448 56, ' +
      'Ed25519 32, Ed448 57, the SECP curves SEC1 compressed (33, 49, 67) or uncompressed, ML-KEM 800/1184/1568, ' +
      'ML-DSA 1312/1952/2592. A PEM sets the type.',
    (text) => publicKeyProblem(text, selected(), 'This public key'),
  )
  // A PEM names its algorithm: the type follows it.
  pubkey.control.addEventListener('input', () => {
    try {
      const { type } = readPublicKey(pubkey.control.value)
      if (type) spec.type.value = type
      spec.type.dispatchEvent(new Event('change'))
    } catch {
      // judged when sent
    }
  })
  const [type, mode, ...rest] = spec.rows
  const checked = [pubkey, ...spec.checked]
  const imported = form(
    'Import key',
    [pubkey.row, type!, mode!, ...rest],
    () =>
      void screen.run('Importing the public key…', async () => {
        checkAll(checked)
        const body = { ...spec.body(), pubkey: toBase64(readPublicKey(pubkey.control.value).bytes) }
        const { kid } = (await screen.ctx.session.request('/api/keymgmt/import', 'keymgmt:imp', { body })) as Answer
        resetForm(imported, spec)
        await screen.added(kid)
        return `Imported the ${typeName(body.type)} public key “${body.label}”, KID ${kid}.`
      }),
  )
  return panel('Import a public key', imported)
}

export interface DeriveForm {
  readonly element: HTMLElement
  /** The form was opened: its pickers read the device's keys again. */
  opened(): void
  /** Fills in `kid` as the source key (the screen opens the form). */
  from(kid: string): void
}

const canAgree = (key: KeyEntry) => key.type.split(',').includes('ECDH')

/** A peer for a derive: another key that can agree, of the source's curve once the source is a listed key. */
function isPeerFor(source: KeyEntry | undefined, key: KeyEntry): boolean {
  const curve = (entry: KeyEntry) => listedParts(entry.type).algorithm
  return canAgree(key) && key !== source && (!source || curve(source) === curve(key))
}

export function deriveForm(screen: KeysScreen): DeriveForm {
  const spec = keySpecFields(DERIVABLE_TYPES, 'Type of the new key')
  // The device's keys, listed again each time the form opens.
  let listing: Promise<KeyEntry[]> = Promise.resolve([])
  const keys = () => listing
  const source = kidPicker({
    label: 'Source key (KID)',
    hint: 'A stored key that can do ECDH: CURVE25519, CURVE448, or a SECP curve with ECDH.',
    keys,
    fits: (key) => canAgree(key) && listedParts(key.type).holds === 'private key',
  })
  const peerKey = publicKeyArea()
  const peerKidField = kidPicker({
    label: 'Peer key (KID)',
    hint: 'A stored key of the same curve (an imported public key will do). Or give its public key below.',
    keys,
    fits: (key, all) =>
      isPeerFor(
        all.find((other) => other.kid === source.value()),
        key,
      ),
    problem: (text) => (text.trim() === '' ? peerProblem() : kidProblem(text)),
  })
  const peerKid = peerKidField.control
  const peerKeyField = checkedField(
    'Or the peer’s public key',
    peerKey,
    'PEM, or raw base64: X25519 32 bytes, X448 56, SEC1 for the SECP curves.',
    (text) => (text.trim() === '' ? undefined : publicKeyProblem(text, ECDH_TYPES, 'The peer’s public key')),
  )
  const refreshPeers = () => void peerKidField.refresh().catch(() => undefined)
  source.control.addEventListener('input', refreshPeers)
  source.row.querySelector('select')?.addEventListener('change', refreshPeers)
  function peerProblem(): string | undefined {
    const kid = peerKid.value.trim() !== ''
    const key = peerKey.value.trim() !== ''
    if (kid && key) return 'Give the peer once: its KID or its public key, not both.'
    return kid || key ? undefined : 'The peer is needed: a stored key’s KID or its public key.'
  }
  const element = panel(
    'Derive a key',
    form(
      'Derive key',
      [source.row, peerKidField.row, peerKeyField.row, ...spec.rows],
      () =>
        void screen.run('Deriving the key…', async () => {
          checkAll([source, peerKidField, peerKeyField, ...spec.checked])
          const peer = peerProblem()
          if (peer) throw new InputError(`Not sent: ${peer}`)
          const body = {
            kid: normaliseKid(source.control.value.trim())!,
            ...(peerKid.value.trim()
              ? { ext_kid: normaliseKid(peerKid.value.trim())! }
              : { pubkey: toBase64(readPublicKey(peerKey.value).bytes) }),
            ...spec.body(),
          }
          const { kid } = (await screen.ctx.session.request('/api/keymgmt/derive', 'keymgmt:derive', {
            body,
          })) as Answer
          await screen.added(kid)
          return `Derived the ${typeName(body.type)} key “${body.label}” from ${body.kid}, KID ${kid}.`
        }),
    ),
  )
  return {
    element,
    opened() {
      listing = deviceKeys(screen.ctx)
      void Promise.all([source.refresh(), peerKidField.refresh()]).catch(() => undefined)
    },
    from(kid) {
      source.set(kid)
      peerKid.focus()
    },
  }
}
