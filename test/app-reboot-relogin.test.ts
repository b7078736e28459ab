// A reboot ends the app's session: the page asks to log in again and mints nothing behind the owner's back, whichever
// way it learns of the new boot first: its watch of the status, a token the device forgot (401), or a login challenge
// under the new boot's session key.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { openApp, type OpenApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { rebootOver } from './helpers/diag.js'
import { login } from './helpers/owner.js'

const RESTARTED = 'The device restarted, so every login ended: log in again.'

/** The page's own logins (`POST /api/auth/token`) from now on. */
function loginsSent(page: Page): string[] {
  const sent: string[] = []
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/auth/token') sent.push(request.url())
  })
  return sent
}

async function askedToLogInAgain(t: Test, app: OpenApp, sent: string[], how: string): Promise<void> {
  const { page } = app
  await page.locator('#login-reason', { hasText: RESTARTED }).waitFor()
  t.ok(await page.getByLabel('Passphrase').isVisible(), `${how}: the login form asks for the passphrase`)
  t.ok(await page.getByRole('navigation').isHidden(), `${how}: no screens`)
  t.equal(await page.locator('#view').innerHTML(), '', `${how}: nothing of the last screen left`)
  t.same(sent, [], `${how}: no login sent by the page after the reboot`)
}

t.test('a reboot asks the owner to log in again, and mints nothing', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const dataDir = join(t.testdirName, 'data')
  const reboot = async () => rebootOver(o.base, dataDir, await login(o.base, 'system:config'))

  // The watch sees the new boot (its uptime restarted) while the dashboard shows.
  await app.logIn()
  let sent = loginsSent(page)
  await reboot()
  await askedToLogInAgain(t, app, sent, 'seen by the watch')
  t.same(await app.violations(), [], 'the login asked again passes the accessibility check')
  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'and in the dark palette')
  await page.emulateMedia({ colorScheme: 'light' })

  // The page's clock stopped, the watch does not read: the page learns of the reboot from its own requests.
  await page.clock.install()
  await page.goto(app.url)
  await app.logIn()
  await app.go('Keys')
  await app.go('Upgrades')
  await page.clock.pauseAt(Date.now() + 1000)
  sent = loginsSent(page)
  await reboot()
  // The key list's token, minted before, died with the boot: a 401 for a token within its exp.
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Keys' }).click()
  await askedToLogInAgain(t, app, sent, 'a token the device forgot')

  // A scope not minted yet: its login challenge comes under the new boot's session key.
  await page.clock.resume()
  await app.logIn()
  await app.go('Upgrades')
  await page.clock.pauseAt(Date.now() + 1000)
  sent = loginsSent(page)
  await reboot()
  // The audit log's scope, not minted yet: its login challenge names the new boot's session key.
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Audit log' }).click()
  await askedToLogInAgain(t, app, sent, 'a new scope after the reboot')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
