// Settings → Authenticators in Chromium, against a real device whose app names a real hem-cloud (hemd --cloud),
// the phone played by the authenticator's core: the pairing's QR code drawn in the page (the modules of the
// payload the device's request makes) with its link, the wait, the pairing listed on both sides with its label
// and date, a pairing cancelled (withdrawn at the broker) and one declined, and an unpair (gone on the device and
// at the broker).
// Without a cloud the panel says how to configure one, and the CSP names no other origin.
import t from 'tap'
import { parsePairingInvite } from '../authenticator/index.js'
import { pairingQrPayload } from '../client/index.js'
import { appWithCloud, drawnQrModules, PHONE_LABEL, readQrModules } from './helpers/app-auth.js'
import { noChromium } from './helpers/browser.js'
import { call } from './helpers/http.js'

t.test('pair a phone from Settings, see it on both sides, cancel one, unpair it', { skip: noChromium }, async (t) => {
  const app = await appWithCloud(t)
  const { page } = app
  const csp = (await call(`${app.o.https}/index.html`)).headers['content-security-policy']
  t.match(csp, `connect-src 'self' ${new URL(app.cloudUrl).origin};`, "the app's CSP names the cloud's origin")
  await app.logIn()
  await app.go('Settings')
  const notice = page.getByRole('status')
  const panel = page.getByRole('region', { name: 'Authenticators' })
  await panel.getByText('No phone is paired with the device.').waitFor()

  // A pairing cancelled while it waits: withdrawn at the broker.
  await panel.getByRole('button', { name: 'Pair a phone' }).click()
  const linkField = panel.getByLabel('Pairing link')
  await linkField.waitFor()
  const cancelledRid = /\/notify\/register\/challenge\/([0-9a-f]+)$/.exec(await linkField.inputValue())?.[1]
  t.ok(cancelledRid, 'the link names a registration')
  await panel.getByRole('button', { name: 'Cancel the pairing' }).click()
  await notice.filter({ hasText: 'Pairing cancelled: the registration is withdrawn at the cloud.' }).waitFor()
  const check = await call(`${app.cloudUrl}/notify/register/check/${cancelledRid}`)
  t.match(check, { status: 410, json: { reason: 'refused' } }, 'the broker closed the registration')
  await linkField.waitFor({ state: 'detached' })

  // A pairing the phone declines: said in words.
  await panel.getByRole('button', { name: 'Pair a phone' }).click()
  await linkField.waitFor()
  await app.phone.decline(await app.phone.offer(parsePairingInvite(await linkField.inputValue())))
  await page.getByRole('alert').filter({ hasText: 'The phone declined the pairing.' }).waitFor()
  await linkField.waitFor({ state: 'detached' })

  // The pairing the phone takes.
  await panel.getByRole('button', { name: 'Pair a phone' }).click()
  await linkField.waitFor()
  const link = await linkField.inputValue()
  t.match(link, new RegExp(`^${app.cloudUrl}/notify/register/challenge/[0-9a-f]+$`), 'the link is shown, as text')
  const { request } = (await call(link)).json as { request: string }
  const expected = pairingQrPayload(link, request, { user: 'Ada', email: 'ada@example.com', hostname: 'hem.example' })
  const qr = panel.getByRole('img', { name: 'QR code of the pairing, for the phone to scan' })
  const drawn = drawnQrModules((await qr.locator('path').getAttribute('d')) ?? '')
  t.equal(readQrModules(drawn), expected, 'the QR code drawn reads as the payload of the device’s request')
  t.ok(await panel.locator('#pairing-progress').isVisible(), 'the wait shows its progress')
  await panel.getByText(/^The pairing expires in \d+:\d\d\.$/).waitFor()
  t.same(await app.violations(), [], 'the pairing shown passes the accessibility check')

  await app.phone.accept(await app.phone.offer(parsePairingInvite(link)))
  await notice.filter({ hasText: new RegExp(`^Paired “${PHONE_LABEL}” \\(KID [0-9a-f]{32}\\)\\.$`) }).waitFor()
  const row = panel.getByRole('row', { name: new RegExp(PHONE_LABEL) })
  await row.waitFor()
  const cells = await row.getByRole('cell').allTextContents()
  const [pairing] = await app.client.extPairings()
  t.same(
    cells.slice(0, 5),
    [PHONE_LABEL, cells[1], pairing!.kid, 'yes', 'yes'],
    'label, KID and both sides in the list',
  )
  t.match(cells[1], /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/, 'the date of the pairing')
  t.same(await app.bothSides(), { device: [pairing!.pid], broker: [pairing!.pid] }, 'paired on both sides')
  t.same(await app.violations(), [], 'the list passes the accessibility check')

  // Unpair: asked first; Cancel leaves it.
  const unpair = row.getByRole('button', { name: `Unpair ${PHONE_LABEL}` })
  const dialog = page.getByRole('dialog', { name: `Unpair ${PHONE_LABEL}?` })
  await unpair.click()
  await dialog.waitFor()
  t.same(await app.violations(), [], 'the confirmation passes the accessibility check')
  await dialog.getByRole('button', { name: 'Cancel' }).click()
  await dialog.waitFor({ state: 'detached' })
  t.same(await app.bothSides(), { device: [pairing!.pid], broker: [pairing!.pid] }, 'nothing removed on Cancel')
  await unpair.click()
  await dialog.getByRole('button', { name: 'Unpair' }).click()
  await notice
    .filter({ hasText: `Unpaired ${PHONE_LABEL}: removed from the device, removed from the cloud.` })
    .waitFor()
  await panel.getByText('No phone is paired with the device.').waitFor()
  t.same(await app.bothSides(), { device: [], broker: [] }, 'gone on the device and at the broker')
  t.same(app.pageProblems(), [], 'no script error, no CSP violation')
})

t.test(
  'without a cloud: the panel says how to name one, the login offers no phone',
  { skip: noChromium },
  async (t) => {
    const app = await appWithCloud(t, { cloud: false })
    const { page } = app
    const index = await call(`${app.o.https}/`)
    t.match(index.headers['content-security-policy'], "connect-src 'self'; ", 'the CSP names no other origin')
    t.same((await call(`${app.o.https}/app-config.json`)).json, {
      cloud: null,
      https_port: Number(new URL(app.o.https).port),
    })
    await page.locator('#remote-login:not([aria-busy])').waitFor({ state: 'attached' })
    t.equal(await page.getByRole('button', { name: 'Approve on my phone' }).count(), 0, 'no approval offered')
    await app.logIn()
    await app.go('Settings')
    const panel = page.getByRole('region', { name: 'Authenticators' })
    await panel.getByText('No cloud is configured for this device: start hemd with --cloud URL').waitFor()
    t.equal(await panel.getByRole('button').count(), 0, 'nothing half-shown')
    t.same(await app.violations(), [])
    t.same(app.pageProblems(), [])
  },
)
