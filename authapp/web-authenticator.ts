// The authenticator this page runs: the protocol core of authenticator/ over this page's fetch, its keys
// non-extractable WebCrypto X25519 keys kept with the pairings in this origin's IndexedDB.
import { openWebAuthenticator, type Authenticator, type WebCryptoKey } from '../authenticator/browser.js'

/** The flows the page uses (contract §4). */
export type PageAuthenticator = Pick<
  Authenticator<WebCryptoKey>,
  'offer' | 'accept' | 'decline' | 'pairings' | 'pendingEvents' | 'open' | 'allow' | 'deny' | 'unpair'
>

/** The pairing's name on the device: `<model> (<platform>)`, as the family's app names itself. */
export function pageLabel(): string {
  return `HEM web authenticator (${navigator.platform || 'browser'})`
}

export function openPageAuthenticator(): Promise<PageAuthenticator> {
  return openWebAuthenticator({ label: pageLabel() })
}
