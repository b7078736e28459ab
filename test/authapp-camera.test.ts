// Pairing by the camera: Chromium's fake capture device plays a y4m video of the pairing's QR code (written here
// from the owner's real invitation); the page reads it (BarcodeDetector where the browser has it, else the bundled
// jsQR), shows the device and pairs once accepted. The CSP lets the camera's stream play: no violation.
import t from 'tap'
import { qrVideo } from './helpers/authapp-camera.js'
import { authappParts, openAuthappPage, violationsInBothModes } from './helpers/authapp.js'
import { noChromium } from './helpers/browser.js'

t.test('the page pairs from the QR code the camera sees', { skip: noChromium }, async (t) => {
  const parts = await authappParts(t)
  const pairing = await parts.owner.startPairing()
  const flags = await qrVideo(t, pairing.payload)
  const { page, problems } = await openAuthappPage(t, parts, flags)

  const native = await page.evaluate(() => 'BarcodeDetector' in globalThis)
  t.comment(`read by ${native ? "the browser's BarcodeDetector" : 'the bundled jsQR'}`)
  await page.getByRole('button', { name: 'Scan the QR code' }).click()
  const offer = page.getByRole('article', { name: 'Pair with hem.example?' })
  await offer.waitFor()
  t.ok(await page.locator('#camera').isHidden(), 'the camera is closed once the code is read')
  t.same(await violationsInBothModes(page), [], 'the offer passes axe, light and dark')
  await offer.getByRole('button', { name: 'Accept' }).click()
  const { kid } = await pairing.finish()
  await page.getByRole('status').filter({ hasText: 'Paired with hem.example.' }).waitFor()
  t.match(await page.getByRole('listitem').filter({ hasText: 'hem.example' }).textContent(), kid)
  t.same(problems, [], 'no script error, no CSP violation')
})

t.test('a QR code that is no invitation is refused in words', { skip: noChromium }, async (t) => {
  const parts = await authappParts(t)
  const flags = await qrVideo(t, 'WIFI:S:home;T:WPA;P:not a pairing;;')
  const { page, problems } = await openAuthappPage(t, parts, flags)
  await page.getByRole('button', { name: 'Scan the QR code' }).click()
  const alert = page.getByRole('alert')
  await alert.waitFor()
  t.equal(await alert.textContent(), 'Cannot pair: the pairing link is not http(s).')
  t.ok(await page.locator('#camera').isHidden(), 'the camera is closed')
  t.same(await violationsInBothModes(page), [], 'the refusal passes axe, light and dark')
  t.same(problems, [], 'no script error, no CSP violation')
})

t.test('scanning stopped by the owner: the camera closes, nothing is read', { skip: noChromium }, async (t) => {
  const parts = await authappParts(t)
  const flags = await qrVideo(t, undefined)
  const { page, problems } = await openAuthappPage(t, parts, flags)
  await page.getByRole('button', { name: 'Scan the QR code' }).click()
  await page.getByRole('status').filter({ hasText: 'Point the camera at the QR code.' }).waitFor()
  await page.getByRole('button', { name: 'Stop scanning' }).click()
  t.ok(await page.locator('#camera').isHidden(), 'the camera view is gone')
  // The scan loop sees the stop at its next frame, then releases the camera.
  await page.waitForFunction(() => {
    const { document } = globalThis as unknown as { document: { getElementById(id: string): unknown } }
    return (document.getElementById('video') as { srcObject: unknown }).srcObject === null
  })
  t.pass('the camera is released')
  t.same(problems, [], 'no script error, no CSP violation')
})
