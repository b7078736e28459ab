// The factory reset in Chromium: behind the typed host name, then followed until the device is
// back with no owner, and the session ended with a message.
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { call } from './helpers/http.js'
import { api } from './helpers/keys.js'

t.test('settings: wipeout behind a typed confirmation', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  await app.logIn()
  await app.go('Settings')
  const typed = page.getByLabel('Type the host name, hem.example, to confirm')
  const erase = page.getByRole('button', { name: 'Erase the device' })
  t.ok(await erase.isDisabled(), 'disabled until something is typed')
  for (const wrong of ['hem', 'HEM.EXAMPLE', 'hem.example ', 'yes']) {
    await typed.fill(wrong)
    t.ok(await erase.isDisabled(), `disabled with "${wrong}"`)
  }
  const posts: string[] = []
  page.on('request', (request) => {
    if (request.method() === 'POST') posts.push(request.url())
  })
  await typed.press('Enter')
  t.same(posts, [], 'Enter in the field sends nothing')
  t.same(await app.violations(), [], 'the confirmation passes the accessibility check')

  await typed.fill('hem.example')
  t.ok(await erase.isEnabled(), 'enabled once the host name is typed')
  await erase.click()
  const notice = page.getByRole('status')
  await notice.filter({ hasText: 'factory state' }).waitFor({ timeout: 120_000 })
  t.equal(
    await notice.textContent(),
    'The device is back to factory state: it has no owner, keys or configuration. Personalise it to use it again.',
  )
  t.ok(await page.getByRole('navigation').isHidden(), 'logged out')
  t.ok(await page.getByRole('alert').isHidden(), 'no error')
  const status = (await call(`${o.base}/api/system/status`)).json
  t.equal(status.inited, false, 'the device is unpersonalised')
  t.equal((await api(`${o.base}/api/system/config`, o.token)).status, 401, "the old owner's token is dead")
  t.same(app.problems, [], 'no script error and no CSP violation')
})
