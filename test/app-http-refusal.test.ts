// Plain HTTP: a page loaded over http:// at the device's host name sends no login (anyone on the path could replay
// its proof) and links to the device's HTTPS origin, its port from /app-config.json; over http:// from loopback, the
// owner's own machine, the login works. The Keys screen's HTTPS link names the same port.
import t from 'tap'
import { APP_HOST, openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'

t.test('login over plain HTTP: refused off loopback, allowed on it', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const httpPort = new URL(o.base).port
  const httpsPort = new URL(o.https).port
  const logins: string[] = []
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === '/api/auth/token') logins.push(request.url())
  })

  await page.goto(`http://${APP_HOST}:${httpPort}/`)
  const refusal = page.locator('#login-refused')
  await refusal.waitFor()
  t.match(
    await refusal.textContent(),
    /^This page came over plain HTTP, so anyone on the network between you and the device could read or change what/,
    'the reason',
  )
  const link = refusal.getByRole('link', { name: `Open it over HTTPS (https://${APP_HOST}:${httpsPort})` })
  t.equal(await link.getAttribute('href'), `https://${APP_HOST}:${httpsPort}/`, 'a link to the HTTPS origin')
  t.ok(await page.getByLabel('Passphrase').isHidden(), 'no passphrase field')
  t.ok(await page.getByRole('button', { name: 'Log in' }).isHidden(), 'no login button')
  t.same(await app.violations(), [], 'the refusal passes the accessibility check')
  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'and in the dark palette')
  await page.emulateMedia({ colorScheme: 'light' })
  t.same(logins, [], 'no login asked for')

  await page.goto(`http://127.0.0.1:${httpPort}/`)
  await app.logIn()
  t.ok(await page.locator('#login-refused').isHidden(), 'loopback: no refusal')
  t.equal(await page.locator('#who').textContent(), 'Logged in as Ada (user passphrase).', 'loopback: logged in')
  await app.go('Keys')
  t.equal(
    await page.getByRole('link', { name: 'Open this screen over HTTPS' }).getAttribute('href'),
    `https://127.0.0.1:${httpsPort}/#/keys`,
    "the Keys screen's HTTPS link names the HTTPS port",
  )
  t.same(app.problems, [], 'no script error and no CSP violation')
})
