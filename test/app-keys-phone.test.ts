// The Keys screen on a phone (390 px wide): the keys as cards no wider than 480 px, nothing that
// scrolls sideways, each card's Open button on the screen and working, and KIDs never broken
// inside a group of digits; the same in the dark palette. The widths are printed for the record.
import t from 'tap'
import type { Page } from 'playwright-core'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { b64, createKey, Tokens } from './helpers/keys.js'

const PHONE = { width: 390, height: 844 }

/** Every element wider than its box that scrolls sideways, and the page's own overflow. */
const sideways = (page: Page) =>
  page.evaluate(() => {
    const doc = (globalThis as any).document
    const boxes = [...doc.querySelectorAll('*')].filter((el: any) => {
      const overflow = (globalThis as any).getComputedStyle(el).overflowX
      return (overflow === 'auto' || overflow === 'scroll') && el.scrollWidth > el.clientWidth
    })
    return { page: doc.documentElement.scrollWidth - doc.documentElement.clientWidth, boxes: boxes.length }
  })

/** How many lines an element's text takes (its line boxes). */
const lines = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((elements) =>
    elements.map((el) => {
      const range = (globalThis as any).document.createRange()
      range.selectNodeContents(el)
      return new Set([...range.getClientRects()].map((rect: any) => Math.round(rect.top))).size
    }),
  )

t.test('the key list on a phone', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const gen = await new Tokens(o.base).get('keymgmt:gen')
  const kids: string[] = []
  for (const [type, label] of [
    ['AES256', 'a label of 32 characters, wide!!'],
    ['SECP384R1', 'tls'],
    ['MLKEM1024', 'pq'],
  ])
    kids.push(
      await createKey(o.https, gen, { type, label, mode: 'ECDH,ExDSA', descr: b64(Buffer.from('x'.repeat(64))) }),
    )
  await page.setViewportSize(PHONE)
  await app.logIn()
  await app.go('Keys')
  const cards = page.locator('ul.key-cards > li')
  t.equal(await cards.count(), 3, 'one card per key')
  const widths = await cards.evaluateAll((all) => all.map((card) => card.getBoundingClientRect().width))
  t.ok(
    widths.every((width) => width <= 480 && width > 300),
    `cards ≤ 480 px and the phone's width: ${widths.map(Math.round).join(', ')} px`,
  )
  t.same(await sideways(page), { page: 0, boxes: 0 }, 'no sideways scroll, of the page or of a box')
  t.same(await lines(page, 'ul.key-cards code.kid'), [1, 1, 1], 'each short KID on one line')
  for (const card of await cards.all()) {
    const open = await card.getByRole('button', { name: 'Open' }).boundingBox()
    t.ok(open && open.x >= 0 && open.x + open.width <= PHONE.width, 'Open is on the screen, not beside it')
  }
  t.same(await app.violations(), [], 'the cards pass the accessibility check')

  await page.getByRole('button', { name: `Open key tls (${kids[1]})` }).click()
  const full = page.locator('.key-details code.kid-full')
  await full.filter({ hasText: kids[1]! }).waitFor()
  t.ok(await full.isVisible(), 'Open opens the key')
  t.same(await full.locator('span').allTextContents(), kids[1]!.match(/.{8}/g), 'the whole KID in groups of 8 digits')
  t.same(await lines(page, '.key-details code.kid-full span'), [1, 1, 1, 1], 'no group broken across lines')
  t.same(await sideways(page), { page: 0, boxes: 0 }, 'the details, the PEM with them, do not scroll sideways')
  t.same(await app.violations(), [], 'the open key passes the accessibility check')

  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'dark: the open key passes')
  await page.getByRole('button', { name: 'Create a key', exact: true }).click()
  t.same(await sideways(page), { page: 0, boxes: 0 }, 'the create form fits too')
  t.same(await app.violations(), [], 'dark: the create form passes')

  await page.setViewportSize({ width: 1280, height: 800 })
  const wide = await cards.evaluateAll((all) => all.map((card) => Math.round(card.getBoundingClientRect().width)))
  t.ok(
    wide.every((width) => width <= 480),
    `at 1280 px, cards side by side: ${wide.join(', ')} px`,
  )
  t.same(app.problems, [], 'no script error and no CSP violation')
})
