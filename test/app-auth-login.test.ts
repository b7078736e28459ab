// "Approve on my phone" on the login screen in Chromium, against a real device whose app names a real hem-cloud,
// the phone played by the authenticator's core: offered only once the device has a pairing; an approval logs in
// as the authenticator (role ExtAuth, the scope asked, the screens it does not cover refused in words); a denial
// a cancel and an expiry (the event withdrawn at the broker) are said, with the countdown to the request's expiry
// shown, and a request no phone got.
import t from 'tap'
import { appWithCloud } from './helpers/app-auth.js'
import { noChromium } from './helpers/browser.js'
import { call } from './helpers/http.js'

t.test('login by approval on a phone: allowed, denied, cancelled', { skip: noChromium }, async (t) => {
  const app = await appWithCloud(t)
  const { page } = app
  const approve = page.getByRole('button', { name: 'Approve on my phone' })
  const notice = page.getByRole('status')
  const alert = page.getByRole('alert')
  const countdown = page.locator('#approval-countdown')
  const offerDecided = () => page.locator('#remote-login:not([aria-busy])').waitFor({ state: 'attached' })

  await offerDecided()
  t.equal(await approve.count(), 0, 'not offered while the device has no pairing')
  const { kid } = await app.pairByApi()
  // The page's clock, which the test may move (it runs with the real one until then).
  await page.clock.install()
  await page.reload()
  await approve.waitFor()
  t.same(await app.violations(), [], 'the offer passes the accessibility check')

  // Denied.
  await approve.click()
  await countdown.filter({ hasText: /^The request expires in \d+:\d\d\.$/ }).waitFor()
  await app.phone.deny(await app.nextApproval())
  await alert.filter({ hasText: 'Denied on your phone: you are not logged in.' }).waitFor()
  t.ok(await page.getByLabel('Passphrase').isVisible(), 'still at the login')

  // Cancelled: the event is withdrawn at the broker.
  await approve.click()
  await countdown.filter({ hasText: /^The request expires in \d+:\d\d\.$/ }).waitFor()
  const minutes = Number(/in (\d+):/.exec((await countdown.textContent()) ?? '')?.[1])
  t.ok(minutes >= 58 && minutes <= 60, 'the countdown runs to the request’s expiry, an hour ahead')
  t.same(await app.violations(), [], 'the wait passes the accessibility check')
  const waiting = await app.nextApproval()
  await page.getByRole('button', { name: 'Cancel' }).click()
  await notice.filter({ hasText: 'Cancelled: the request is withdrawn at the cloud.' }).waitFor()
  const check = await call(`${app.cloudUrl}/notify/event/check/${waiting.pending.eventId}`)
  t.match(check, { status: 410, json: { reason: 'withdrawn' } }, 'the broker withdrew the event')
  t.ok(await countdown.isHidden(), 'the countdown is gone')

  // Expired: the page's clock passes the request's exp; the event is withdrawn all the same.
  await approve.click()
  await countdown.filter({ hasText: /^The request expires in/ }).waitFor()
  const expiring = await app.nextApproval()
  await page.clock.fastForward('01:00:05')
  await alert.filter({ hasText: 'The request expired before your phone answered: you are not logged in.' }).waitFor()
  const expired = await call(`${app.cloudUrl}/notify/event/check/${expiring.pending.eventId}`)
  t.match(expired, { status: 410, json: { reason: 'withdrawn' } }, 'the expired request is withdrawn at the broker')
  await page.clock.setSystemTime(Date.now())

  // Allowed: a session of the authenticator, of the scope asked.
  await approve.click()
  await countdown.filter({ hasText: /^The request expires in/ }).waitFor()
  const approval = await app.nextApproval()
  t.match(approval.opened, { scope: 'system:config' }, 'the phone is asked for system:config')
  await app.phone.allow(approval, 900)
  await page.locator('#screen-title', { hasText: 'Dashboard' }).waitFor()
  const who = (await page.locator('#who').textContent()) ?? ''
  t.match(
    who,
    new RegExp(
      `^Logged in by approval on a phone \\(authenticator ${kid}\\): role ExtAuth, scope system:config, until`,
    ),
    'the session says whose it is and what it may do',
  )
  await page.locator('#view:not([aria-busy])').waitFor()
  t.same(await app.violations(), [], 'the approved session passes the accessibility check')
  await app.go('Keys')
  await alert.filter({ hasText: 'This session was approved for system:config only, and this needs keymgmt:' }).waitFor()
  await app.go('Settings')
  await page.getByText('Pairing and unpairing authenticators need the passphrase login').waitFor()

  // The device forgets the pairing, the broker still routes to it: the device seals the scope for no one.
  await page.getByRole('button', { name: 'Log out' }).click()
  await app.client.deleteKey(kid)
  await approve.click()
  await alert.filter({ hasText: 'No paired phone got the request: pair one in Settings → Authenticators.' }).waitFor()
  t.same(app.pageProblems(), [], 'no script error, no CSP violation')
})
