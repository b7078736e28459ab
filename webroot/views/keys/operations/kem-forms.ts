// ML-KEM (FIPS 203): encapsulate to the key (its public part will do), giving a shared secret and
// the ciphertext that carries it; decapsulate a ciphertext with the private key.
import { cryptoCalls } from '../../../../client/browser.js'
import { keyTypes } from '../../../../protocol/browser.js'
import { dataField, readAll } from './data-field.js'
import { outputView } from './op-output.js'
import { opSection, type UseContext } from './op-section.js'

export function encapsForm(use: UseContext): HTMLDetailsElement {
  return opSection(use, {
    title: 'Encapsulate a secret (ML-KEM)',
    submit: 'Encapsulate',
    doing: 'Encapsulating…',
    rows: [],
    async run() {
      const { sharedSecret, ciphertext } = await cryptoCalls.mlKemEncapsulate(use.screen.ctx.session, use.key.kid)
      return {
        said: 'Encapsulated a new shared secret: send the ciphertext to the key’s holder.',
        shown: [
          outputView({ name: 'Shared secret', bytes: sharedSecret, file: 'shared-secret.bin' }),
          outputView({ name: 'Ciphertext', bytes: ciphertext, file: 'kem-ciphertext.bin' }),
        ],
      }
    },
  })
}

export function decapsForm(use: UseContext): HTMLDetailsElement {
  const bytes = (keyTypes[use.key.type] as { ciphertext: number }).ciphertext
  const ct = dataField({
    name: 'Ciphertext',
    hint: `What an encapsulation to this ${use.key.type} key gave: ${bytes} bytes.`,
    format: 'base64',
    min: bytes,
    max: bytes,
    exactly: [bytes],
  })
  return opSection(use, {
    title: 'Decapsulate a secret (ML-KEM)',
    submit: 'Decapsulate',
    doing: 'Decapsulating…',
    rows: [ct.row],
    async run() {
      const got = await readAll({ ct })
      const { sharedSecret } = await cryptoCalls.mlKemDecapsulate(use.screen.ctx.session, use.key.kid, got.ct!)
      return {
        said: 'Decapsulated the shared secret.',
        shown: [outputView({ name: 'Shared secret', bytes: sharedSecret, file: 'shared-secret.bin' })],
      }
    },
  })
}
