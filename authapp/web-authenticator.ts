// The authenticator this page runs: the protocol core of authenticator/, over this page's fetch.
import {
  Authenticator,
  fetchTransport,
  MemoryPairingStore,
  type Sealer,
  type StoredPairing,
} from '../authenticator/browser.js'
import { fromBase64, toBase64 } from '../client/browser.js'

/** The flows the page uses (contract §4). */
export type PageAuthenticator = Pick<
  Authenticator,
  'offer' | 'accept' | 'decline' | 'pendingEvents' | 'open' | 'allow' | 'deny' | 'unpair'
> & { pairings(): Promise<StoredPairing[]> }

/** The pairing's name on the device: `<model> (<platform>)`, as the family's app names itself. */
export function pageLabel(): string {
  return `HEM web authenticator (${navigator.platform || 'browser'})`
}

// INTERIM until authenticator/browser.ts's openWebAuthenticator lands: pairings for the page's life only.
export async function openPageAuthenticator(): Promise<PageAuthenticator> {
  const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])
  const sealer: Sealer = {
    async seal(secret) {
      const iv = crypto.getRandomValues(new Uint8Array(12))
      const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, secret as BufferSource))
      return `${toBase64(iv)}.${toBase64(sealed)}`
    },
    async open(text) {
      const [iv = '', sealed = ''] = text.split('.')
      const iv_ = fromBase64(iv) as BufferSource
      return new Uint8Array(
        await crypto.subtle.decrypt({ name: 'AES-GCM', iv: iv_ }, key, fromBase64(sealed) as BufferSource),
      )
    },
  }
  const store = new MemoryPairingStore()
  const core = new Authenticator({
    transport: fetchTransport(fetch.bind(globalThis)),
    store,
    sealer,
    random: (length) => crypto.getRandomValues(new Uint8Array(length)),
    now: () => Math.floor(Date.now() / 1000),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    label: pageLabel(),
  })
  return Object.assign(core, { pairings: () => store.list() })
}
