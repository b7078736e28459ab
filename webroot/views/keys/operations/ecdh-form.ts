// ECDH: the agreement of a private X25519/X448/SECP key with a peer of its curve; the device gives
// the secret's first 32 bytes, or a digest of the whole secret.
import { field } from '../../../dom.js'
import { cryptoCalls, type Digest } from '../../../../client/browser.js'
import { digestSelect, NO_DIGEST } from './digest-select.js'
import { outputView } from './op-output.js'
import { opSection, type UseContext } from './op-section.js'
import { peerField } from './peer-field.js'

export function ecdhForm(use: UseContext): HTMLDetailsElement {
  const peer = peerField(use)
  const alg = digestSelect('None: the secret’s first 32 bytes')
  return opSection(use, {
    title: 'Agree on a secret (ECDH)',
    submit: 'Agree',
    doing: 'Agreeing on a secret…',
    rows: [...peer.rows, field('Digest of the secret', alg, 'What the device gives of the shared secret.')],
    async run() {
      const secret = await cryptoCalls.ecdh(use.screen.ctx.session, {
        kid: use.key.kid,
        ...peer.read(),
        ...(alg.value !== NO_DIGEST ? { alg: alg.value as Digest } : {}),
      })
      return {
        said: `Agreed on a secret with the peer (${secret.length} bytes shown).`,
        shown: [outputView({ name: 'Shared secret', bytes: secret, file: 'shared-secret.bin' })],
      }
    },
  })
}
