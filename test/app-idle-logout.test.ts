// The idle logout, on the page's own clock (Playwright's, moved on at will): 15 minutes by default, a warning a
// minute before with "Stay logged in", and the period a setting of the app (Settings → This app) kept across a reload.
import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { openApp, type OpenApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'

const PERIOD = 'Log out after this long without use'

async function bothPalettes(t: Test, app: OpenApp, what: string): Promise<void> {
  t.same(await app.violations(), [], `${what}: passes the accessibility check`)
  await app.page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], `${what}: and in the dark palette`)
  await app.page.emulateMedia({ colorScheme: 'light' })
}

const warning = (page: Page) => page.locator('#idle-warning')
const reason = (page: Page) => page.locator('#login-reason')

t.test('logged out after the idle period, warned a minute before', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page } = app
  await page.clock.install()
  await page.goto(app.url)
  await app.logIn()
  await app.go('Settings')
  t.equal(await page.getByLabel(PERIOD).inputValue(), '15', '15 minutes by default')
  await bothPalettes(t, app, 'the app preferences')

  await page.clock.fastForward('13:00')
  t.ok(await warning(page).isHidden(), 'no warning before the last minute')
  await page.clock.fastForward('01:05')
  await warning(page).waitFor()
  t.equal(
    await page.locator('#idle-words').textContent(),
    'You will be logged out in a minute, for lack of use.',
    'warned a minute before',
  )
  await bothPalettes(t, app, 'the idle warning')
  await page.getByRole('button', { name: 'Stay logged in' }).click()
  await warning(page).waitFor({ state: 'hidden' })
  await page.clock.fastForward('01:00')
  t.ok(await page.getByRole('navigation').isVisible(), 'staying: still logged in past the first period')
  t.ok(await warning(page).isHidden(), 'and not warned again yet')

  await page.clock.fastForward('15:00')
  await reason(page).filter({ hasText: 'Logged out after 15 minutes without use.' }).waitFor()
  t.ok(await page.getByRole('navigation').isHidden(), 'logged out')
  t.ok(await warning(page).isHidden(), 'the warning gone with the session')
  t.equal(await page.locator('#view').innerHTML(), '', 'nothing of the last screen left')
  await bothPalettes(t, app, 'logged out for lack of use')

  // Back to the device's time (a login's proof carries the page's), then the period set to 5 minutes.
  await page.clock.setSystemTime(Date.now())
  await app.logIn()
  await app.go('Settings')
  await page.getByLabel(PERIOD).selectOption('5')
  await page.getByText('Kept in this browser: you are logged out after 5 minutes without use.').waitFor()
  await page.reload()
  await app.logIn()
  await app.go('Settings')
  t.equal(await page.getByLabel(PERIOD).inputValue(), '5', 'kept across a reload')
  t.equal(
    await page.evaluate(() =>
      (globalThis as unknown as { localStorage: { getItem(key: string): string | null } }).localStorage.getItem(
        'hem.idle-minutes',
      ),
    ),
    '5',
    'in localStorage',
  )
  await page.clock.fastForward('04:01')
  await warning(page).waitFor()
  await page.clock.fastForward('01:00')
  await reason(page).filter({ hasText: 'Logged out after 5 minutes without use.' }).waitFor()
  t.pass('logged out after 5 minutes')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
