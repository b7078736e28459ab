// The Keys screen's search and filter in Chromium: one field finds keys by label, by description and
// by the first digits of a KID (or its short form), a type filter narrows the list, and the page
// says what it searched; each card tells when the device made its key, in words, in UTC.
import t from 'tap'
import type { Page } from 'playwright-core'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { api, b64, createKey, Tokens } from './helpers/keys.js'

/** Unix seconds as the owner reads a date: "5 March 2031, 09:07 UTC" (the device's zone). */
const words = (seconds: number) => {
  const date = new Date(seconds * 1000)
  const day = date.toLocaleDateString('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'long', year: 'numeric' })
  return `${day}, ${date.toISOString().slice(11, 16)} UTC`
}

const shownKids = (page: Page) =>
  page.locator('ul.key-cards > li').evaluateAll((cards) => cards.map((card) => card.getAttribute('data-kid')))

t.test('search by label, description and KID; filter by type; created', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  const key = (type: string, label: string, descr?: string) =>
    createKey(o.https, gen, { type, label, ...(descr ? { descr: b64(Buffer.from(descr)) } : {}) })
  // More than a page, so that the search must read past the first.
  const filler: string[] = []
  for (let i = 0; i < 15; i++) filler.push(await key('SHA2-256', `filler ${i}`))
  const billing = await key('AES256', 'Billing archive', 'invoices 2031')
  const signer = await key('ED25519', 'release signer', 'signs the billing exports')
  const tls = await key('SECP256R1', 'TLS front')
  const pq = await key('MLKEM768', 'pq inbox')

  await app.logIn()
  await app.go('Keys')
  const range = page.locator('.key-list .range')
  t.equal(await range.textContent(), 'Keys 1–15 of 19', 'the first page holds none of them')
  const status = page.getByRole('status')
  const search = page.getByRole('search')
  const text = search.getByLabel('Label, description or KID')
  const find = async (what: string) => {
    await text.fill(what)
    await search.getByRole('button', { name: 'Search' }).click()
    await status.filter({ hasText: /match/ }).waitFor()
  }
  const searched = page.locator('.key-list .searched')

  await find('billing')
  t.same(await shownKids(page), [billing, signer], 'a label and a description that hold it, in any case')
  t.equal(await range.textContent(), 'Matches 1–2 of 2', 'how many match')
  t.equal(
    await searched.textContent(),
    'Searched for “billing” in a label, a description or the start of a KID among all 19 keys the device ' +
      'holds (their entries read from the device and matched in this page).',
    'it says what it searched, and how',
  )
  t.same(await app.violations(), [], 'the matches pass the accessibility check')

  await find('INVOICES')
  t.same(await shownKids(page), [billing], 'by description alone')
  await find('release')
  t.same(await shownKids(page), [signer], 'by label alone')
  await find(tls.slice(0, 6).toUpperCase())
  t.same(await shownKids(page), [tls], 'by the first digits of a KID')
  await find(`${pq.slice(0, 8)}…${pq.slice(-4)}`)
  t.same(await shownKids(page), [pq], 'by the short form a card shows')
  await find(pq.slice(4, 12))
  t.notOk((await shownKids(page)).includes(pq), 'the middle of a KID is no match')

  // The filter: alone, then with the text.
  await text.fill('')
  await search.getByLabel('Type').selectOption({ label: 'Ed25519' })
  await status.filter({ hasText: '1 key matches.' }).waitFor()
  t.same(await shownKids(page), [signer], 'a type')
  await search.getByLabel('Type').selectOption({ label: 'Any of HMAC secret keys' })
  await status.filter({ hasText: '15 keys match.' }).waitFor()
  t.same(await shownKids(page), filler, 'a kind: every HMAC key')
  await find('filler 1')
  t.same(
    await shownKids(page),
    [1, 10, 11, 12, 13, 14].map((i) => filler[i]),
    'kind and text together',
  )
  await search.getByLabel('Type').selectOption({ label: 'AES-256' })
  await status.filter({ hasText: 'No key matches' }).waitFor()
  t.equal(await range.textContent(), 'No key matches.', 'none')
  t.same(await app.violations(), [], 'no match passes the accessibility check')
  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'dark: no match passes')
  await page.emulateMedia({ colorScheme: 'light' })

  await page.getByRole('button', { name: 'Show all keys' }).click()
  await status.filter({ hasText: 'All keys shown.' }).waitFor()
  t.equal(await range.textContent(), 'Keys 1–15 of 19', 'all keys again')
  t.equal(await text.inputValue(), '', 'the search emptied')
  t.equal(await search.getByLabel('Type').inputValue(), '', 'the filter too')

  // Created: the device's clock, in words, in the device's zone.
  await page.getByRole('button', { name: 'Next page' }).click()
  await range.filter({ hasText: 'Keys 16–19' }).waitFor()
  const created = page.locator('ul.key-cards > li dt:text-is("Created") + dd')
  const listed = (await api(`${o.https}/api/keymgmt/list/15/15`, await tokens.get('keymgmt:list'))).json.list
  t.same(
    await created.allTextContents(),
    listed.map((entry: { created: number }) => words(entry.created)),
    `each card: when the device made it (${await created.first().textContent()})`,
  )
  t.same(app.problems, [], 'no script error and no CSP violation')
})
