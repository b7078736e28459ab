// The digests of the agreement modes (crypto-contract §4): an HMAC keyed by the raw shared secret
// needs one; an ECDH answers that digest of the secret, or its first 32 bytes without one.
import { select } from '../../../dom.js'
import { digests } from '../../../../protocol/browser.js'

export const NO_DIGEST = ''

export function digestSelect(none?: string): HTMLSelectElement {
  const names = Object.keys(digests).map((name) => [name, name] as const)
  return select(
    'alg',
    none === undefined ? names : [[NO_DIGEST, none] as const, ...names],
    none === undefined ? 'SHA2-256' : NO_DIGEST,
  )
}
