// A device's 403 reaches the owner in the device's words: a key list asked for under a token of
// another scope (the browser's request given a real logger:get token on its way out) is refused
// by the device, and the Keys screen says so, without retrying the refusal as a dead token.
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { api } from './helpers/keys.js'
import { login } from './helpers/owner.js'

t.test('a 403 from the device, shown in its words', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const wrongScope = await login(o.base, 'logger:get')
  const refusal = await api(`${o.https}/api/keymgmt/list/0/15`, wrongScope)
  t.equal(refusal.status, 403, 'the device refuses a key list under logger:get')

  let listed = 0
  await page.route('**/api/keymgmt/list/**', async (route) => {
    listed += 1
    await route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${wrongScope}` } })
  })
  await app.logIn()
  await app.go('Keys')
  const alert = page.getByRole('alert')
  await alert.waitFor()
  t.equal(await alert.textContent(), `${refusal.json.message} (HTTP 403)`, 'the refusal, as the device put it')
  t.equal(listed, 1, 'asked once: a 403 is not a dead token to renew')
  t.same(await app.violations(), [], 'the refusal passes the accessibility check')

  await page.unroute('**/api/keymgmt/list/**')
  await app.go('Dashboard')
  await app.go('Keys')
  await page
    .getByText(/^Keys 0–0 of 0$|^No keys yet\.$/)
    .first()
    .waitFor()
  t.ok(await alert.isHidden(), 'with the right token the same screen works')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
