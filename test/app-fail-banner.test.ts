// The fail state on every screen: the shell's watch of the status shows it, its bits in words, on a screen that
// reads no status of its own (the audit log), as soon as the device enters it.
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { diagOk } from './helpers/diag.js'

t.test('the fail banner on the audit log screen', { skip: noChromium }, async (t) => {
  const app = await openApp(t, { boot: { diag: true } })
  const { page, o } = app
  await app.logIn()
  await app.go('Audit log')
  const banner = page.locator('#fail-banner')
  t.ok(await banner.isHidden(), 'no fault, no banner')

  await diagOk(o.base, 'break_temp')
  await banner.waitFor()
  t.equal(
    await banner.textContent(),
    'The device is in the fail state: failed: the temperature is out of range.',
    'the fault in words, on a screen that reads no status',
  )
  t.equal(await page.locator('#screen-title').textContent(), 'Audit log', 'still on that screen')
  t.same(await app.violations(), [], 'the banner passes the accessibility check')
  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'and in the dark palette')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
