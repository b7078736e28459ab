// Every refusal of a certificate import, in Chromium, in the owner's words: what was wrong with the
// file chosen and what to do, marked on that file's field. The page's own checks (nothing sent) and
// each refusal of the device's import route (actors/auth/tls-import.ts): not a certificate, a chain
// out of order, a key the device cannot serve, a key that is not the certificate's, a key that is no
// PKCS#8; in light and dark.
import { generateKeyPairSync } from 'node:crypto'
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { issue, makeCa, pkcs8 } from './helpers/x509-fixtures.js'

type File = { name: string; bytes: Uint8Array | string }

const pem = (label: string, der: Uint8Array) =>
  `-----BEGIN ${label}-----\n${Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n')}\n-----END ${label}-----\n`

t.test('settings: each refusal of a certificate import, in words', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page } = app
  await app.logIn()
  await app.go('Settings')
  const alert = page.getByRole('alert')
  const chain = page.getByLabel('Certificate chain')
  const key = page.getByLabel('Private key (optional)')
  let sent = 0
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().endsWith('/api/system/config')) sent++
  })
  const file = ({ name, bytes }: File) => ({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) })
  /** Imports these files; resolves with the alert and the message beside the field it names. */
  const tryImport = async (files: { chain?: File; key?: File }, field: 'chain' | 'key') => {
    await chain.setInputFiles(files.chain ? [file(files.chain)] : [])
    await key.setInputFiles(files.key ? [file(files.key)] : [])
    await page.getByRole('button', { name: 'Import the certificate' }).click()
    await alert.filter({ hasText: /./ }).waitFor()
    const control = field === 'chain' ? chain : key
    const described = (await control.getAttribute('aria-describedby')) ?? ''
    const beside = await page.locator(`[id="${described.split(' ').at(-1)}"].field-error`).textContent()
    return { alert: await alert.textContent(), beside, invalid: await control.getAttribute('aria-invalid') }
  }

  const ca = await makeCa('Wording CA')
  const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
  const leaf = await issue(ca, p256, 'hem.example')
  const goodChain = { name: 'chain.pem', bytes: pem('CERTIFICATE', leaf) + pem('CERTIFICATE', ca.cert) }
  const ed = generateKeyPairSync('ed25519').privateKey
  const cases: [string, { chain?: File; key?: File }, 'chain' | 'key', string, number?][] = [
    ['no certificate file', {}, 'chain', 'Choose the certificate file, the one your CA sent (.crt, .pem or .cer).'],
    [
      'a text file that is no certificate',
      { chain: { name: 'notes.txt', bytes: 'my certificate' } },
      'chain',
      'The certificate file is not PEM or DER: choose the .crt/.pem file your CA sent.',
    ],
    [
      'a key that is not PKCS#8 (PEM)',
      { chain: goodChain, key: { name: 'ec.key', bytes: '-----BEGIN EC PRIVATE KEY-----\nAAAA\n' } },
      'key',
      'The key file is not an unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----): choose the key you made the ' +
        'certificate request with, or convert it with: openssl pkcs8 -topk8 -nocrypt -in KEY -out key.pem.',
    ],
    [
      'too large for one request',
      { chain: { name: 'big.pem', bytes: pem('CERTIFICATE', leaf).repeat(24) } },
      'chain',
      'The files are too large for one request (',
    ],
    [
      'DER that is no chain of certificates',
      { chain: { name: 'odd.der', bytes: Uint8Array.of(0x30, 0x09, 1, 2) } },
      'chain',
      'The certificate file is not PEM or DER: choose the .crt/.pem file your CA sent.',
      400,
    ],
    [
      'a key chosen as the certificate',
      { chain: { name: 'key.der', bytes: pkcs8(p256) } },
      'chain',
      'The certificate file holds something that is not a certificate (its certificate 1): choose the file of ' +
        'certificates only, not a key or a request.',
      400,
    ],
    [
      'the chain out of order',
      { chain: { name: 'chain.pem', bytes: pem('CERTIFICATE', ca.cert) + pem('CERTIFICATE', leaf) }, key: undefined },
      'chain',
      "In the certificate file, certificate 1 is not issued by certificate 2: put the device's certificate first, " +
        'then the CA certificate that issued it, then that one’s issuer, and leave out any other.',
      406,
    ],
    [
      'a key the device cannot serve',
      {
        chain: {
          name: 'ed.pem',
          bytes: pem('CERTIFICATE', await issue(ca, ed, 'hem.example')) + pem('CERTIFICATE', ca.cert),
        },
        key: { name: 'ed.key', bytes: pem('PRIVATE KEY', pkcs8(ed)) },
      },
      'key',
      'The device serves only ECDSA P-256 keys or RSA keys of 2048 bits or more, and this key is neither: make a ' +
        'key of one of these kinds and have a certificate issued for it, or use the device’s own key (Make a CSR).',
      406,
    ],
    [
      'the key of another certificate',
      {
        chain: goodChain,
        key: {
          name: 'other.key',
          bytes: pem('PRIVATE KEY', pkcs8(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey)),
        },
      },
      'key',
      'The key file is not the key this certificate is for: choose the key that belongs to the certificate.',
      406,
    ],
    [
      'no key, and the certificate is not for the device’s own',
      { chain: goodChain },
      'chain',
      'This certificate is not for the device’s own key: choose the key it was issued for too, or have a ' +
        'certificate issued for the device’s request (Make a CSR).',
      406,
    ],
    [
      'a key in DER that is no PKCS#8 (SEC1)',
      { chain: goodChain, key: { name: 'sec1.der', bytes: p256.export({ type: 'sec1', format: 'der' }) } },
      'key',
      'The key file is not an unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----): choose the key you made the ' +
        'certificate request with, or convert it with: openssl pkcs8 -topk8 -nocrypt -in KEY -out key.pem.',
      406,
    ],
  ]
  for (const [what, files, field, words, status] of cases) {
    const before = sent
    const shown = await tryImport(files, field)
    t.ok(shown.beside?.startsWith(words), `${what}: beside the ${field} file: ${shown.beside}`)
    t.equal(shown.invalid, 'true', `${what}: the ${field} file marked`)
    if (status) {
      t.equal(shown.alert, `${shown.beside} (HTTP ${status})`, `${what}: the device's ${status}, in the same words`)
      t.equal(sent, before + 1, `${what}: sent once`)
    } else {
      t.equal(shown.alert, 'Nothing was sent: correct the fields marked first.', `${what}: the alert`)
      t.equal(sent, before, `${what}: nothing sent`)
    }
  }
  t.same(await app.violations(), [], 'a refusal shown passes the accessibility check')
  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'dark: a refusal shown passes')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
