// After a wipeout from Settings the device has no owner again: the app brings the set-up wizard back in place of
// the login, which could only fail.
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'

t.test('a wipeout brings the set-up wizard back', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  await app.logIn()
  await app.go('Settings')
  await page.getByLabel('Type the host name, hem.example, to confirm').fill('hem.example')
  await page.getByRole('button', { name: 'Erase the device' }).click()
  await page.getByRole('heading', { name: 'Set up this device' }).waitFor({ timeout: 120_000 })
  const attestation = page.locator('#setup-attestation')
  await attestation.waitFor()
  t.match(await attestation.textContent(), /^Not provisioned/, 'step 1 again: the attestation checked')
  t.equal(await page.locator('#setup-device dd').nth(1).textContent(), o.device.devid, 'the same device')
  t.ok(await page.locator('#login').isHidden(), 'no login form')
  t.ok(await page.getByRole('button', { name: 'Next: make it yours' }).isVisible(), 'ready for a new owner')
  t.equal(await page.locator('#setup').count(), 1, 'one wizard')
  t.same(await app.violations(), [], 'it passes axe')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
