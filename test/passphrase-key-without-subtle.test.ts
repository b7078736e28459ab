// The passphrase key as a page derives it where the browser offers no crypto.subtle (plain HTTP
// from a LAN address): the same key as with it.
import t from 'tap'
import { derivePassphraseKeyAsync } from '../client/index.js'
import { derivePassphraseKey } from './helpers/derive-passphrase-key.js'
import { USER_PASS } from './helpers/owner.js'

t.test('without crypto.subtle (a page over plain HTTP from a LAN address) the key is the same', async (t) => {
  const expected = derivePassphraseKey(USER_PASS, 'an eid')
  const webCrypto = Object.getOwnPropertyDescriptor(globalThis, 'crypto')!
  // What a browser leaves outside a secure context: random numbers, no subtle.
  const insecure = { getRandomValues: globalThis.crypto.getRandomValues.bind(globalThis.crypto) }
  Object.defineProperty(globalThis, 'crypto', { value: insecure, configurable: true })
  try {
    t.same(await derivePassphraseKeyAsync(USER_PASS, 'an eid'), expected)
  } finally {
    Object.defineProperty(globalThis, 'crypto', webCrypto)
  }
})
