// The passphrase change in Chromium, done in the page as the clients do it: checked before
// sending, refused in words when the device says no, and afterwards only the new one logs in.
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { loginAnswer, MASTER_PASS, USER_PASS } from './helpers/owner.js'

const NEW_PASS = 'a new passphrase for Ada'

t.test('settings: change the passphrase', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  await app.logIn()
  await app.go('Settings')
  const current = page.getByLabel('Current passphrase')
  const next = page.getByLabel('New passphrase', { exact: true })
  const repeat = page.getByLabel('Repeat the new passphrase')
  const change = page.getByRole('button', { name: 'Change the passphrase' })
  const alert = page.getByRole('alert')
  const sent: string[] = []
  page.on('request', (request) => {
    if (request.method() === 'POST') sent.push(new URL(request.url()).pathname)
  })

  await current.fill(USER_PASS)
  await next.fill('short')
  await repeat.fill('shorter')
  await change.click()
  await alert.waitFor()
  t.equal(await alert.textContent(), 'Nothing was sent: correct the fields marked first.')
  t.equal(await next.getAttribute('aria-invalid'), 'true', 'too short')
  t.equal(await repeat.getAttribute('aria-invalid'), 'true', 'the repeat differs')
  t.ok(await page.getByText('At least 8 characters.', { exact: true }).isVisible())
  t.ok(await page.getByText('The two new passphrases differ.').isVisible())
  t.same(await app.violations(), [], 'the marked form passes the accessibility check')
  t.same(sent, [], 'nothing was sent')

  // A wrong current passphrase: the device refuses the login that proves it.
  await current.fill('not my passphrase')
  await next.fill(NEW_PASS)
  await repeat.fill(NEW_PASS)
  await change.click()
  await alert.filter({ hasText: 'current passphrase' }).waitFor()
  t.equal(await alert.textContent(), 'The device refused the current passphrase; nothing was changed (HTTP 401)')
  t.equal(await current.getAttribute('aria-invalid'), 'true')

  // The master passphrase cannot become the user's: the device's 406, in its words.
  await current.fill(USER_PASS)
  await next.fill(MASTER_PASS)
  await repeat.fill(MASTER_PASS)
  await change.click()
  await alert.filter({ hasText: 'master' }).waitFor()
  t.equal(await alert.textContent(), 'The new passphrase is the master passphrase (HTTP 406)')
  t.equal((await loginAnswer(o.base, 'system:config')).status, 200, 'the passphrase is unchanged')

  await current.fill(USER_PASS)
  await next.fill(NEW_PASS)
  await repeat.fill(NEW_PASS)
  await change.click()
  const notice = page.getByRole('status')
  await notice.filter({ hasText: 'passphrase was changed' }).waitFor()
  t.equal(
    await notice.textContent(),
    'Your passphrase was changed, and the old one no longer works: log in with the new one.',
  )
  t.ok(await page.getByRole('navigation').isHidden(), 'logged out')
  t.equal((await loginAnswer(o.base, 'system:config')).status, 401, 'the old passphrase is refused')
  t.equal((await loginAnswer(o.base, 'system:config', NEW_PASS)).status, 200, 'the new one logs in')

  await page.getByLabel('Passphrase').fill(USER_PASS)
  await page.getByRole('button', { name: 'Log in' }).click()
  await alert.filter({ hasText: 'Login refused' }).waitFor()
  t.pass('the app refuses the old passphrase')
  await app.logIn(NEW_PASS)
  t.ok(await page.getByText('Logged in as Ada (user passphrase).').isVisible(), 'and logs in with the new one')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
