// The HTTPS certificate in Chromium: a CSR made by the device, downloaded and parsed; a chain for
// it imported without a key; a self-signed certificate imported with its key (wrapped in the
// page), refused without it; the reboot that puts it in service, followed by the page.
import 'reflect-metadata'
import { Pkcs10CertificateRequest } from '@peculiar/x509'
import { createPublicKey, X509Certificate } from 'node:crypto'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connect } from 'node:tls'
import t from 'tap'
import { APP_HOST, openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { writeSelfSignedCert } from './helpers/self-signed-cert.js'
import { issue, makeCa } from './helpers/x509-fixtures.js'

const SUBJECT_ALT_NAME = '2.5.29.17'
const pem = (der: Uint8Array) => new X509Certificate(Buffer.from(der)).toString()

/** The certificate the HTTPS port serves now. */
function served(https: string): Promise<Buffer> {
  const url = new URL(https)
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().raw)
      socket.destroy()
    })
    socket.on('error', reject)
  })
}

t.test('settings: CSR, certificate import, reboot', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  await app.logIn()
  await app.go('Settings')
  const notice = page.getByRole('status')
  const alert = page.getByRole('alert')

  await page.getByRole('button', { name: 'Make a CSR' }).click()
  await notice.filter({ hasText: 'The CSR for hem.example is ready' }).waitFor()
  const shown = await page.getByLabel('Certificate signing request (PEM)').inputValue()
  t.match(shown, /^-----BEGIN CERTIFICATE REQUEST-----\n/)
  t.same(await app.violations(), [], 'the CSR shown passes the accessibility check')
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download the CSR' }).click(),
  ])
  t.equal(download.suggestedFilename(), 'hem.example.csr.pem')
  const saved = await readFile((await download.path())!, 'utf8')
  t.equal(saved, shown, 'the download is the CSR shown')
  const csr = new Pkcs10CertificateRequest(saved)
  t.ok(await csr.verify(), 'the CSR parses and its signature verifies')
  t.equal(csr.subject, `CN=${APP_HOST}`, 'it names the device')
  const san = csr.extensions.find((extension) => extension.type === SUBJECT_ALT_NAME)
  t.ok(san && Buffer.from(san.value).includes(APP_HOST), 'in its alternative names too')

  const chain = page.getByLabel('Certificate chain')
  const key = page.getByLabel('Private key (optional)')
  const importIt = page.getByRole('button', { name: 'Import the certificate' })
  const sent: unknown[] = []
  page.on('request', (request) => {
    if (request.method() === 'POST') sent.push(request.postDataJSON())
  })

  // Checked before sending: no chain, a key that is no PKCS#8.
  await key.setInputFiles({
    name: 'old.key',
    mimeType: 'text/plain',
    buffer: Buffer.from('-----BEGIN EC PRIVATE KEY-----'),
  })
  await importIt.click()
  await alert.filter({ hasText: 'Nothing was sent' }).waitFor()
  t.equal(await chain.getAttribute('aria-invalid'), 'true')
  t.ok(await page.getByText('Choose the certificate file, the one your CA sent').isVisible())
  t.ok(await page.getByText(/openssl pkcs8 -topk8 -nocrypt/).isVisible(), 'how to make a PKCS#8 key')
  t.same(await app.violations(), [], 'the marked form passes the accessibility check')
  t.same(sent, [], 'nothing was sent')
  await key.setInputFiles([])

  // The CA's certificate for the device's own key: the chain alone.
  const ca = await makeCa('Settings Test CA')
  const ownKey = createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' })
  const leaf = await issue(ca, ownKey, APP_HOST, { altNames: [{ type: 'dns', value: APP_HOST }] })
  await chain.setInputFiles({
    name: 'chain.pem',
    mimeType: 'text/plain',
    buffer: Buffer.from(pem(leaf) + pem(ca.cert)),
  })
  await importIt.click()
  await notice.filter({ hasText: 'The certificate is accepted' }).waitFor()
  t.same(sent.at(-1), { tls: { crt: Buffer.concat([leaf, ca.cert]).toString('base64') } }, 'the chain as DER, no key')
  const offer = page.getByRole('region', { name: 'Reboot required' })
  t.equal(
    await offer.locator('p').textContent(),
    'The device accepted the certificate. It takes effect after the next reboot.',
    'reboot_required, told',
  )
  t.same(await app.violations(), [], 'the reboot offer passes the accessibility check')

  // A certificate of another key, without that key: the device's refusal, in its words.
  // In the test's directory, which openApp made (a second t.testdir would empty it, the device's data with it).
  const dir = join(t.testdirName, 'self-signed')
  await mkdir(dir)
  writeSelfSignedCert(APP_HOST, join(dir, 'cert.pem'), join(dir, 'key.pem'))
  const selfSigned = await readFile(join(dir, 'cert.pem'))
  await chain.setInputFiles({ name: 'cert.pem', mimeType: 'text/plain', buffer: selfSigned })
  await importIt.click()
  await alert.filter({ hasText: 'HTTP 406' }).waitFor()
  t.match(await alert.textContent(), /key/, `the refusal in words: ${await alert.textContent()}`)

  // With its key, wrapped in the page for the device.
  await chain.setInputFiles({ name: 'cert.pem', mimeType: 'text/plain', buffer: selfSigned })
  await key.setInputFiles({ name: 'key.pem', mimeType: 'text/plain', buffer: await readFile(join(dir, 'key.pem')) })
  await importIt.click()
  await notice.filter({ hasText: 'The certificate is accepted' }).waitFor()
  const body = sent.at(-1) as { tls: { key: string; emp: string } }
  t.match(body.tls.key, /^[A-Za-z0-9+/]{22}==\.[A-Za-z0-9+/=]+$/, 'the key goes wrapped: IV.ciphertext')
  t.equal(Buffer.from(body.tls.emp, 'base64').length, 32, 'with its ephemeral X25519 key')
  t.notMatch(JSON.stringify(body), /PRIVATE KEY/, 'never in the clear')

  const before = await served(o.https)
  await page.getByRole('button', { name: 'Reboot now' }).click()
  await notice.filter({ hasText: 'The device rebooted and is back' }).waitFor({ timeout: 120_000 })
  t.ok(await offer.isHidden(), 'the offer is gone')
  const now = await served(o.https)
  t.notSame(now, before, 'the HTTPS port serves another certificate')
  t.same(now, new X509Certificate(selfSigned).raw, 'the one imported last')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
