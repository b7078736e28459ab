// The role shown: the header says which passphrase logged in, from the token's `sub` (U or M).
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { MASTER_PASS, USER_PASS } from './helpers/owner.js'

t.test('the header names the passphrase that logged in', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page } = app
  const who = page.locator('#who')

  await app.logIn(USER_PASS)
  t.equal(await who.textContent(), 'Logged in as Ada (user passphrase).', 'a user login')
  await page.getByRole('button', { name: 'Log out' }).click()
  await page.locator('#login-reason', { hasText: 'Logged out.' }).waitFor()

  await app.logIn(MASTER_PASS)
  t.equal(await who.textContent(), 'Logged in as Ada (master passphrase).', 'a master login')
  t.same(await app.violations(), [], 'passes the accessibility check')
  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'and in the dark palette')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
