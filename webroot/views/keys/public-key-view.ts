// A key's public key as the owner takes it away: shown inline as PEM with a copy button, and
// downloadable as PEM and as the raw bytes the device speaks.
import { h, saveFile, uid } from '../../dom.js'
import { copyButton } from '../../copy-button.js'
import { fromBase64, type KeyDetails, type KeyEntry } from '../../../client/browser.js'
import { isPublicKeyType, publicKeyPem } from './public-key-pem.js'
import { typeWords } from './key-type-words.js'

/** The public key's PEM, its copy and its downloads; nothing for a key without one (AES, HMAC). */
export function publicKeyView(entry: KeyEntry, details: KeyDetails): HTMLElement[] {
  const { type } = typeWords(entry.type)
  if (!details.pubkey || !type || !isPublicKeyType(type)) return []
  const raw = fromBase64(details.pubkey)
  const pem = publicKeyPem(type, raw)
  const heading = h('h4', { id: uid('pem') }, 'Public key (PEM)')
  return [
    heading,
    h('pre', { class: 'pem', tabindex: 0, 'aria-labelledby': heading.id }, pem),
    h(
      'div',
      { class: 'buttons' },
      copyButton('Copy the PEM', () => pem),
      h(
        'button',
        { type: 'button', onclick: () => saveFile(`key-${entry.kid}.pem`, pem, 'application/x-pem-file') },
        'Download PEM',
      ),
      h('button', { type: 'button', onclick: () => saveFile(`key-${entry.kid}.bin`, raw) }, 'Download raw'),
    ),
  ]
}
