import { Authenticator } from './authenticator.js'
import { fetchTransport } from './broker-client.js'
import { IndexedDbPairingStore } from './indexed-db-pairing-store.js'
import { WebCryptoKeys, type WebCryptoKey } from './webcrypto-keys.js'

export interface WebAuthenticatorOptions {
  /** `<model> (<platform>)`, e.g. 'Web authenticator (Chromium on Linux)'. */
  label: string
  /** Default globalThis.fetch. */
  fetch?: typeof fetch
  /** Unix seconds; default the page's clock. */
  now?: () => number
  sleep?: (ms: number) => Promise<void>
  /** IndexedDB name, default 'hem-authenticator'. */
  database?: string
}

/** The web page's authenticator: WebCrypto keys that never leave the browser, pairings in the origin's IndexedDB. */
export async function openWebAuthenticator(o: WebAuthenticatorOptions): Promise<Authenticator<WebCryptoKey>> {
  const fetcher = o.fetch ?? globalThis.fetch.bind(globalThis)
  return new Authenticator({
    transport: fetchTransport(fetcher),
    store: await IndexedDbPairingStore.open(o.database ?? 'hem-authenticator'),
    keys: new WebCryptoKeys(),
    random: (length) => globalThis.crypto.getRandomValues(new Uint8Array(length)),
    now: o.now ?? (() => Math.floor(Date.now() / 1000)),
    sleep: o.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    label: o.label,
  })
}
