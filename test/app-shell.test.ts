// The app's shell in Chromium: login (and its refusal), one screen at a time by the navigation,
// logout; keyboard-usable, labelled, readable at phone width, and nothing the CSP refuses.
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'

t.test('log in, walk every screen, log out', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page } = app
  t.same(await app.violations(), [], 'the login form passes the accessibility check')

  await page.getByLabel('Passphrase').fill('not the passphrase')
  await page.keyboard.press('Enter')
  const alert = page.getByRole('alert')
  await alert.waitFor()
  t.equal(
    await alert.textContent(),
    'Login refused: Authentication failed. Check the passphrase. (HTTP 401)',
    'a wrong passphrase, in plain words',
  )
  t.equal(await page.getByLabel('Passphrase').inputValue(), '', 'the passphrase left the field')
  t.ok(await page.getByRole('navigation').isHidden(), 'no screens before login')

  await app.logIn()
  t.ok(await alert.isHidden(), 'the error is gone')
  const screens = await app.screens()
  t.same(
    screens.map((screen) => screen.title),
    ['Dashboard', 'Keys', 'Audit log', 'Settings', 'Upgrades', 'Health'],
    'every screen in the navigation',
  )
  t.equal(await page.locator('#screen-title').textContent(), 'Dashboard', 'the first screen after login')
  t.equal(
    await page.evaluate(
      () => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id,
    ),
    'screen-title',
    'focus moves to the screen heading',
  )
  t.ok(await page.getByText('Logged in as Ada (user passphrase).').isVisible(), 'who is logged in, and how')

  for (const view of screens) {
    await app.go(view.title)
    t.equal(new URL(page.url()).hash, `#/${view.path}`, `${view.title}: in the URL`)
    t.equal(await page.getByRole('link', { name: view.title, exact: true }).getAttribute('aria-current'), 'page')
    t.ok(await alert.isHidden(), `${view.title}: no error`)
    t.same(await app.violations(), [], `${view.title}: passes the accessibility check`)
    await page.setViewportSize({ width: 360, height: 740 })
    const overflow = await page.evaluate(() => {
      const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
      return root.documentElement.scrollWidth
    })
    t.ok(overflow <= 360, `${view.title}: no sideways scrolling at 360 px (${overflow})`)
    await page.setViewportSize({ width: 1280, height: 800 })
  }

  await page.getByRole('button', { name: 'Log out' }).click()
  await page.getByRole('status').filter({ hasText: 'Logged out.' }).waitFor()
  t.equal(await page.locator('#login-reason').textContent(), 'Logged out.', 'the login says why')
  t.ok(await page.getByRole('navigation').isHidden(), 'logged out: no screens')
  t.equal(await page.locator('#view').innerHTML(), '', 'and nothing of the last one left in the page')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
