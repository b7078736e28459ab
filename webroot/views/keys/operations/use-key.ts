// The "Use this key" section of a key's details: every operation the device offers for the key's
// type (key-uses.ts), each a form of its own; each runs under a token of exactly the key's scope,
// keymgmt:use:<kid>. Loaded with import() when a key's details open: the first load has no need of it.
import { h } from '../../../dom.js'
import type { KeyEntry } from '../../../../client/browser.js'
import { deviceKeys } from '../kid-picker.js'
import type { KeysScreen } from '../keys-screen.js'
import { decryptForm, encryptForm } from './cipher-forms.js'
import { ecdhForm } from './ecdh-form.js'
import { decapsForm, encapsForm } from './kem-forms.js'
import { keyFacts, usesOf, type Use } from './key-uses.js'
import { macForm } from './mac-forms.js'
import type { UseContext } from './op-section.js'
import { signatureForm } from './signature-forms.js'
import { wrapForm } from './wrap-forms.js'

export function useKeySection(screen: KeysScreen, entry: KeyEntry): HTMLElement {
  const key = keyFacts(entry)
  const uses = key ? usesOf(key) : []
  const heading = h('h4', {}, 'Use this key')
  if (!key || uses.length === 0)
    return h(
      'section',
      { class: 'key-uses', 'aria-label': 'Use this key' },
      heading,
      h(
        'p',
        {},
        key?.ecdh
          ? 'A public key agrees with nothing by itself: choose it as the peer of a private key of its curve ' +
              '(ECDH, encrypt, HMAC, wrap or derive).'
          : 'The device offers no operation with this key.',
      ),
    )
  let listed: Promise<KeyEntry[]> | undefined
  const use: UseContext = {
    screen,
    key,
    keys: () => (listed ??= deviceKeys(screen.ctx)),
  }
  const decrypt = uses.includes('decrypt') ? decryptForm(use) : undefined
  const forms: Record<Use, () => HTMLElement> = {
    encrypt: () => encryptForm(use, decrypt),
    decrypt: () => decrypt!.element,
    sign: () => signatureForm(use, 'sign'),
    verify: () => signatureForm(use, 'verify'),
    hmac: () => macForm(use, 'make'),
    'hmac-check': () => macForm(use, 'check'),
    ecdh: () => ecdhForm(use),
    wrap: () => wrapForm(use, 'wrap'),
    unwrap: () => wrapForm(use, 'unwrap'),
    encaps: () => encapsForm(use),
    decaps: () => decapsForm(use),
    derive: () => h('button', { type: 'button', onclick: () => screen.deriveFrom(key.kid) }, 'Derive from this key'),
  }
  return h(
    'section',
    { class: 'key-uses', 'aria-label': 'Use this key' },
    heading,
    h('p', { class: 'hint' }, `Each operation runs under a token for this key alone (keymgmt:use:${key.kid}).`),
    ...uses.map((u) => forms[u]()),
  )
}
