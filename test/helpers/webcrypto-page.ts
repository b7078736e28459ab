// The entry of the page that authenticator-webcrypto.test.ts bundles and opens in Chromium: the web provider's
// vectors, and a key kept in IndexedDB then used again after a reload. Each function answers JSON for tap to judge.
import {
  IndexedDbPairingStore,
  openWebAuthenticator,
  WebCryptoKeys,
  type WebCryptoKey,
} from '../../authenticator/browser.js'
import { fromBase64, toBase64 } from '../../protocol/browser.js'
import { vectorChecks, type AppVectors, type DeviceVector } from './authenticator-vectors.js'

const keys = new WebCryptoKeys()
const PROBE = new TextEncoder().encode('probe')
const LABEL = 'Web authenticator (Chromium, tap)'

/** What a page can tell of a stored key: whether the browser would give its bytes out in any format. */
async function keyFacts(key: WebCryptoKey): Promise<{ extractable: boolean; exported: string[] }> {
  const exported: string[] = []
  const attempts: [string, () => Promise<unknown>][] = [
    ['pkcs8', () => crypto.subtle.exportKey('pkcs8', key)],
    ['jwk', () => crypto.subtle.exportKey('jwk', key)],
    ['raw', () => crypto.subtle.exportKey('raw', key)],
  ]
  for (const [format, attempt] of attempts)
    await attempt().then(
      () => exported.push(`${format}: exported`),
      (err: Error) => exported.push(`${format}: ${err.name}`),
    )
  return { extractable: key.extractable, exported }
}

/** Where a page could leave a secret besides IndexedDB: it must be empty. */
function otherStorage(): { localStorage: number; cookie: string } {
  const page = globalThis as { localStorage?: { length: number }; document?: { cookie: string } }
  return { localStorage: page.localStorage?.length ?? -1, cookie: page.document?.cookie ?? 'no document' }
}

const hemTest = {
  vectors: (v1: AppVectors, device: DeviceVector) => vectorChecks(keys, v1, device),

  /** A fresh key stored with its pairing; the HMAC under X25519(it, peer) to compare after the reload. */
  async keep(database: string, peer: string) {
    const store = await IndexedDbPairingStore.open(database)
    const fresh = await keys.generate()
    const aid = toBase64(fresh.key.aid)
    const pairing = {
      pid: toBase64(new Uint8Array(32).fill(1)),
      eid: peer,
      aid,
      label: LABEL,
      baseUrl: 'http://127.0.0.1',
      created: 1,
    }
    await store.add({ ...pairing, aidKey: fresh.handle })
    store.close()
    const mac = toBase64(await (await fresh.key.agree(fromBase64(peer))).hmac(PROBE))
    return { aid, mac, ...(await keyFacts(fresh.handle)) }
  },

  /** After a reload: the pairing as the face lists it, and its key from IndexedDB computing as before. */
  async reopen(database: string, peer: string) {
    const listed = await (await openWebAuthenticator({ label: LABEL, database })).pairings()
    const store = await IndexedDbPairingStore.open(database)
    const [kept] = await store.list()
    store.close()
    if (!kept) throw new Error('no pairing in IndexedDB after the reload')
    const key = await keys.open(kept.aidKey, fromBase64(kept.aid))
    const mac = toBase64(await (await key.agree(fromBase64(peer))).hmac(PROBE))
    return { listed, mac, ...(await keyFacts(kept.aidKey)), ...otherStorage() }
  },
}

Object.assign(globalThis, { hemTest })
export type HemTestPage = typeof hemTest
