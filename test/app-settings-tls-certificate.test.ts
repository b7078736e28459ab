// Settings → the TLS certificate in use: subject, issuer, validity and SHA-256 fingerprint as the HTTPS port serves
// it, read in the page; read again once the reboot that puts an imported certificate in service is followed.
import { X509Certificate } from 'node:crypto'
import type { Page } from 'playwright-core'
import t from 'tap'
import { APP_HOST, openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { deviceTlsKey, servedCertificate } from './helpers/device-tls.js'
import { issue, makeCa } from './helpers/x509-fixtures.js'

const shown = (page: Page) => page.locator('#tls-in-use dd').allTextContents()
const minute = (date: string) => `${new Date(date).toISOString().slice(0, 16).replace('T', ' ')} UTC`

t.test('settings: the certificate in use, and after an import and its reboot', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  await app.logIn()
  await app.go('Settings')
  await page.locator('#tls-in-use').waitFor()
  const own = new X509Certificate(await servedCertificate(o.https))
  const [subject, issuer, valid, fingerprint] = await shown(page)
  t.equal(subject, own.subject.split('\n').join(', '), 'the subject')
  t.match(issuer, own.issuer.split('\n').join(', '), 'the issuer')
  t.match(issuer, /self-signed/, "the device's own: said to be self-signed")
  t.match(valid, `from ${minute(own.validFrom)} to ${minute(own.validTo)}: expires in `, 'the validity, in words')
  t.match(fingerprint, `${own.fingerprint256} Copy the fingerprint`, 'the SHA-256 fingerprint, with a copy button')
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    t.same(await app.violations(), [], `it passes axe (${colorScheme})`)
  }
  await page.emulateMedia({ colorScheme: 'light' })

  const ca = await makeCa('Panel Test CA')
  const leaf = await issue(ca, await deviceTlsKey(o.base, o.token), APP_HOST, {
    altNames: [{ type: 'dns', value: APP_HOST }],
  })
  const pem = (der: Uint8Array) => new X509Certificate(Buffer.from(der)).toString()
  await page.getByLabel('Certificate chain').setInputFiles({
    name: 'chain.pem',
    mimeType: 'text/plain',
    buffer: Buffer.from(pem(leaf) + pem(ca.cert)),
  })
  await page.getByRole('button', { name: 'Import the certificate' }).click()
  await page.getByRole('region', { name: 'Reboot required' }).waitFor()
  t.equal((await shown(page))[3], fingerprint, 'staged, not in use: the panel still shows the served one')
  await page.getByRole('button', { name: 'Reboot now' }).click()
  await page.getByRole('status').filter({ hasText: 'The device rebooted and is back' }).waitFor({ timeout: 120_000 })
  // The reboot ended the session, as every restart does: the owner logs in again.
  await page.getByText('The device restarted').first().waitFor()
  await app.logIn()
  await app.go('Settings')
  const imported = new X509Certificate(Buffer.from(leaf))
  await page
    .locator('#tls-in-use dd')
    .first()
    .filter({ hasText: `CN=${APP_HOST}` })
    .waitFor()
  const after = await shown(page)
  t.equal(after[1], 'CN=Panel Test CA; 1 more certificate in the chain', "the CA's, and the chain's length")
  t.match(after[3], imported.fingerprint256, 'the imported leaf, now served')
  t.ok((await servedCertificate(o.https)).equals(Buffer.from(leaf)), 'as the handshake shows')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
