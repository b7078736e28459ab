// Issue 38 item 3, the owner's whole story in Chromium: in one browser context the management app (a real device
// naming a real hem-cloud) pairs a phone and asks for approval; in another, the web authenticator that hem-cloud
// serves scans the QR code the app drew (the phone's camera plays it), pairs, then denies one login and approves
// the next. Only the two pages act; the test process only reads the device and the broker to check them.
import t from 'tap'
import { appWithCloud, drawnQrModules } from './helpers/app-auth.js'
import { PHONE } from './helpers/authapp.js'
import { qrVideo } from './helpers/authapp-camera.js'
import { noChromium, openPage } from './helpers/browser.js'

t.test('the app pairs and asks, the phone page pairs, denies and approves', { skip: noChromium }, async (t) => {
  const app = await appWithCloud(t)

  // Pairing: the app draws the QR code, the phone's camera sees it, the owner accepts on the phone.
  await app.logIn()
  await app.go('Settings')
  const panel = app.page.getByRole('region', { name: 'Authenticators' })
  await panel.getByRole('button', { name: 'Pair a phone' }).click()
  const qr = panel.getByRole('img', { name: 'QR code of the pairing, for the phone to scan' })
  const camera = await qrVideo(t, drawnQrModules((await qr.locator('path').getAttribute('d')) ?? ''))
  const phone = await openPage(t, { args: camera })
  await phone.page.setViewportSize(PHONE)
  await phone.page.goto(`${app.cloudUrl}/authenticator/`)
  await phone.page.getByRole('button', { name: 'Scan the QR code' }).click()
  const phoneSays = phone.page.getByRole('status')
  const offer = phone.page.getByRole('article', { name: 'Pair with hem.example?' })
  await offer.getByText('ada@example.com').waitFor()
  await offer.getByRole('button', { name: 'Accept' }).click()
  await phoneSays.filter({ hasText: 'Paired with hem.example.' }).waitFor()
  await app.page
    .getByRole('status')
    .filter({ hasText: /^Paired “.+” \(KID [0-9a-f]{32}\)\.$/ })
    .waitFor()
  const [pairing] = await app.client.extPairings()
  t.ok(pairing, 'the device keeps the pairing')
  t.same(await app.bothSides(), { device: [pairing!.pid], broker: [pairing!.pid] }, 'on both sides')
  await phone.page.getByRole('listitem').filter({ hasText: 'hem.example' }).waitFor()

  // A login the phone denies.
  await app.page.getByRole('button', { name: 'Log out' }).click()
  await app.page.reload()
  const approve = app.page.getByRole('button', { name: 'Approve on my phone' })
  await approve.click()
  await app.page
    .locator('#approval-countdown')
    .filter({ hasText: /^The request expires in \d+:\d\d\.$/ })
    .waitFor()
  const card = phone.page.getByRole('article', { name: 'hem.example asks for your approval' })
  await card.waitFor()
  await card.getByRole('button', { name: 'Deny' }).click()
  await app.page.getByRole('alert').filter({ hasText: 'Denied on your phone: you are not logged in.' }).waitFor()
  t.ok(await app.page.getByLabel('Passphrase').isVisible(), 'still at the login')

  // A login the phone approves, for an hour.
  await approve.click()
  await card.waitFor()
  await card.getByLabel('1 hour').check()
  await card.getByRole('button', { name: 'Allow' }).click()
  await phoneSays.filter({ hasText: /^Allowed for 1 hour/ }).waitFor()
  // The app goes on where it was (Settings, its address says), now on the approved token.
  const who = app.page.locator('#who')
  await who.filter({ hasText: /^Logged in by approval on a phone/ }).waitFor()
  t.match(
    await who.textContent(),
    new RegExp(
      `^Logged in by approval on a phone \\(authenticator ${pairing!.kid}\\): role ExtAuth, scope system:config`,
    ),
    'the app runs on the approved token, and says so',
  )
  await app.page.getByText('Pairing and unpairing authenticators need the passphrase login').waitFor()
  t.same(app.pageProblems(), [], 'the app: no script error, no CSP violation')
  t.same(
    phone.problems.filter((p) => !/^\d{3} /.test(p) || !p.includes('/notify/')),
    [],
    'the phone page: no script error, no CSP violation',
  )
})
