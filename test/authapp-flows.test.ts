// The web authenticator in Chromium, end to end: hem-cloud serves it, a real device and the client library play the
// owner's side. Pair by pasting the QR text, approve (the token works, the period chosen is the token's), deny, a
// key's use in words, a storage scope's write switch, a request withdrawn while shown, a reload that keeps the
// pairing, a link of another broker refused, unpair. axe in each state, light and dark, at 390 px; no script error
// and no CSP violation.
import t from 'tap'
import type { Page } from 'playwright-core'
import { noChromium } from './helpers/browser.js'
import { openAuthapp, pairByPasting, scrollsSideways, violationsInBothModes } from './helpers/authapp.js'
import { call } from './helpers/http.js'
import { bearer } from './helpers/owner.js'

/** A bearer's claims, unverified: the device made it, the test reads what it says. */
const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>

/** The parts of IndexedDB and WebCrypto the check below reads in the page (tests compile without the DOM's types). */
interface IdbRequest<T> {
  result: T
  onsuccess: (() => void) | null
  onerror: (() => void) | null
}
interface IdbDatabase {
  transaction(store: string, mode: 'readonly'): { objectStore(name: string): { getAll(): IdbRequest<object[]> } }
  close(): void
}
interface PageGlobals {
  indexedDB: { open(name: string): IdbRequest<IdbDatabase> }
  CryptoKey: abstract new () => { type: string; extractable: boolean; algorithm: { name: string } }
}

/** Each IndexedDB record of the page's pairings: its pid, the CryptoKeys in it and how many byte arrays it holds. */
function storedKeys(page: Page) {
  return page.evaluate(async () => {
    const { indexedDB, CryptoKey } = globalThis as unknown as PageGlobals
    const done = <T>(request: IdbRequest<T>) =>
      new Promise<T>((resolve, reject) => {
        request.onsuccess = () => resolve(request.result)
        request.onerror = () => reject(new Error('IndexedDB refused'))
      })
    const db = await done(indexedDB.open('hem-authenticator'))
    const records = await done(db.transaction('pairings', 'readonly').objectStore('pairings').getAll())
    db.close()
    return records.map((record) => {
      const values = Object.values(record)
      const keys = values.filter((value) => value instanceof CryptoKey)
      return {
        pid: (record as { pid?: unknown }).pid,
        keys: keys.map((key) => ({ type: key.type, extractable: key.extractable, algorithm: key.algorithm.name })),
        rawBytes: values.filter((value) => value instanceof Uint8Array || value instanceof ArrayBuffer).length,
      }
    })
  })
}

t.test(
  'pair, allow, deny, words of each scope, a withdrawn request, reload, unpair',
  { skip: noChromium },
  async (t) => {
    const app = await openAuthapp(t)
    const { page, owner } = app
    t.ok(await page.getByText('No device is paired with this phone yet.').isVisible())
    t.same(await violationsInBothModes(page), [], 'the empty page passes axe, light and dark')
    t.notOk(await scrollsSideways(page), 'no sideways scrolling at 390 px')

    const { kid, pid } = await pairByPasting(app, async (offer) => {
      t.match(await offer.textContent(), /Host namehem\.exampleUserAdaE-mailada@example\.comAsked from127\.0\.0\.1/)
      t.same(await violationsInBothModes(page), [], 'the offer passes axe, light and dark')
    })
    const item = page.getByRole('listitem').filter({ hasText: 'hem.example' })
    await item.waitFor()
    t.match(await item.textContent(), new RegExp(`UserAdaE-mailada@example\\.comPaired on.+Key on the device${kid}`))
    t.same(
      (await owner.client.extPairings()).map((p) => [p.kid, p.pid]),
      [[kid, pid]],
      'the device holds the pairing',
    )
    t.same(
      await storedKeys(page),
      [{ pid, keys: [{ type: 'private', extractable: false, algorithm: 'X25519' }], rawBytes: 0 }],
      "IndexedDB holds the pairing with its key, a non-extractable CryptoKey, and no key's bytes",
    )

    // Allow for 1 hour: the token works, and lives the hour.
    const first = await owner.askApproval('system:config')
    const card = page.getByRole('article', { name: 'hem.example asks for your approval' })
    await card.waitFor()
    t.match(await card.textContent(), "To read and change the device's configuration")
    t.match(await card.textContent(), /Asked from127\.0\.0\.1/)
    t.same(await violationsInBothModes(page), [], 'a request passes axe, light and dark')
    t.notOk(await scrollsSideways(page), 'a request fits 390 px')
    await card.getByLabel('1 hour').check()
    await card.getByRole('button', { name: 'Allow' }).click()
    const allowed = await first.outcome()
    if (allowed.state !== 'allowed') throw new Error(`not allowed: ${JSON.stringify(allowed)}`)
    const { token } = await owner.client.extToken(allowed.authreply)
    t.equal((await call(`${app.o.base}/api/system/config`, { headers: bearer(token) })).status, 200, 'the token works')
    const claims = claimsOf(token)
    t.ok(Math.abs((claims.exp as number) - (claims.iat as number) - 3600) <= 5, 'it lives the hour chosen')
    await page.getByRole('status').filter({ hasText: "Allowed for 1 hour: read and change the device's" }).waitFor()
    t.equal(await card.count(), 0, 'the request left the page')

    // A key's use, in words; denied.
    const { kid: keyKid } = await owner.client.createKey({ label: 'signing', type: 'ED25519' })
    const second = await owner.askApproval(`keymgmt:use:${keyKid}`)
    await card.waitFor()
    t.match(await card.textContent(), 'To use the key “signing” (Ed25519 private key)')
    t.match(await card.textContent(), `keymgmt:use:${keyKid}`)
    await card.getByRole('button', { name: 'Deny' }).click()
    t.match(await second.outcome(), { state: 'denied', pid })
    await page.getByRole('status').filter({ hasText: 'Denied: use the key “signing”' }).waitFor()

    // A storage scope: the write switch turns a read-only request into read-write.
    const third = await owner.askApproval('storage:disk0')
    await card.waitFor()
    t.match(await card.textContent(), 'To unlock disk 0 to read only')
    await card.getByLabel('Allow writing to the disk').check()
    t.match(await card.textContent(), 'To unlock disk 0 to read and write')
    t.same(await violationsInBothModes(page), [], 'a storage request passes axe, light and dark')
    await card.getByRole('button', { name: 'Allow' }).click()
    const rw = await third.outcome()
    if (rw.state !== 'allowed') throw new Error(`not allowed: ${JSON.stringify(rw)}`)
    t.equal(claimsOf((await owner.client.extToken(rw.authreply)).token).scope, 'storage:disk0:rw', 'granted writable')

    // Withdrawn by the client while shown: it leaves with a note.
    const fourth = await owner.askApproval('logger:get')
    await card.waitFor()
    t.match(await card.textContent(), 'To read the audit log')
    await fourth.withdraw()
    await page
      .getByRole('status')
      .filter({ hasText: 'The request to read the audit log was answered elsewhere, withdrawn or expired.' })
      .waitFor()
    t.equal(await card.count(), 0, 'the withdrawn request left the page')

    // A reload keeps the pairing (IndexedDB), and it still answers.
    await page.reload()
    await item.waitFor()
    const fifth = await owner.askApproval('system:config')
    await card.waitFor()
    await card.getByRole('button', { name: 'Deny' }).click()
    t.match(await fifth.outcome(), { state: 'denied' }, 'answered after a reload')

    // A link of another broker: refused in words, nothing fetched.
    await page
      .getByLabel("Or paste the pairing link or the QR code's text")
      .fill('https://api.encedo.com/notify/register/challenge/00ff')
    await page.getByRole('button', { name: 'Read the invitation' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    t.match(
      await alert.textContent(),
      /^This invitation is for the broker at https:\/\/api\.encedo\.com, and this page/,
    )
    t.same(await violationsInBothModes(page), [], 'the refusal passes axe, light and dark')

    // Unpair: confirmed, gone at the broker and here; the page says the device key must go too.
    await item.getByRole('button', { name: 'Unpair' }).click()
    t.same(await violationsInBothModes(page), [], 'the confirmation passes axe, light and dark')
    await item.getByRole('button', { name: 'Unpair hem.example' }).click()
    const said = page.getByRole('status').filter({ hasText: 'Unpaired hem.example' })
    await said.waitFor()
    t.same(await violationsInBothModes(page), [], 'unpaired: passes axe, light and dark')
    t.match(await said.textContent(), `Delete this phone's key ${kid} on the device too`)
    t.ok(await page.getByText('No device is paired with this phone yet.').isVisible())
    const proof = async () => {
      const { epk } = await owner.broker.deviceSession((await owner.client.pairingIdentity()).eid)
      return { ...(await owner.client.extMac(epk)), epk }
    }
    t.same(await owner.broker.subscribersList(await proof()), [], 'the broker has no pairing left')
    await page.reload()
    await page.getByText('No device is paired with this phone yet.').waitFor()

    t.same(
      await page.evaluate(() => {
        const { localStorage, sessionStorage, document } = globalThis as unknown as {
          localStorage: { length: number }
          sessionStorage: { length: number }
          document: { cookie: string }
        }
        return [localStorage.length, sessionStorage.length, document.cookie]
      }),
      [0, 0, ''],
      'nothing in localStorage, sessionStorage or a cookie',
    )
    t.same(app.problems, [], 'no script error, no CSP violation, no failed file')
  },
)
