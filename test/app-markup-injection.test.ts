// What the device stores is shown as text, never as markup: a key whose label and description
// are HTML appears word for word in the Keys screen and the audit timeline, and nothing of it runs.
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { b64, createKey, Tokens } from './helpers/keys.js'

const LABEL = '<img src=x onerror=alert(1)>'
const DESCR = '<script>alert(2)</script>'

t.test('markup in a key label and description stays text', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page } = app
  const dialogs: string[] = []
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  const tokens = new Tokens(app.o.base)
  const kid = await createKey(app.o.https, await tokens.get('keymgmt:gen'), {
    label: LABEL,
    type: 'AES256',
    descr: b64(Buffer.from(DESCR)),
  })
  await app.logIn()
  await app.go('Keys')
  const card = page.locator(`ul.key-cards > li[data-kid="${kid}"]`)
  await card.waitFor()
  t.ok(await card.getByRole('heading', { name: LABEL, exact: true }).isVisible(), 'the label, as text')
  t.ok(await card.locator('dd').getByText(DESCR, { exact: true }).isVisible(), 'the description, as text')

  await app.go('Audit log')
  await page.getByRole('button', { name: 'Verify all files' }).click()
  await page.locator('#verdict').waitFor()
  t.match(await page.locator('#verdict').textContent(), /^Verified:/)
  t.ok(await page.getByText(kid).first().isVisible(), 'the key in the timeline')

  t.equal(await page.locator('#view img, #view script').count(), 0, 'no element made of the markup')
  t.same(dialogs, [], 'nothing of it ran')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
