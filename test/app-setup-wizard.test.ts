// First start in the browser: a fresh P device opens the set-up wizard, which shows who the device is before
// anything is typed (variant, devid, versions, the attestation checked in the page against the factory CA the app
// ships, the TLS fingerprint), refuses wrong input before sending, then personalises as hemctl does, logs in and
// shows the dashboard.
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Page } from 'playwright-core'
import t from 'tap'
import { fromBase64, toBase64 } from '../client/browser.js'
import { signAttestation, type FactoryCa } from '../factory/index.js'
import type { Device } from '../runtime/types.js'
import { FRESH_HOST, openFreshApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { servedCertificate } from './helpers/device-tls.js'
import { call } from './helpers/http.js'
import { api } from './helpers/keys.js'
import { login, MASTER_PASS, USER_PASS } from './helpers/owner.js'
import { makeCa } from './helpers/x509-fixtures.js'

const devCa: FactoryCa = {
  key: createPrivateKey(readFileSync(new URL('../deploy/keys/factory-ca-dev.key.pem', import.meta.url), 'utf8')),
  cert: new Uint8Array(
    new X509Certificate(readFileSync(new URL('../deploy/keys/factory-ca-dev.crt.pem', import.meta.url))).raw,
  ),
}

/** axe in light and dark: one line per violation, each prefixed by the scheme. */
async function bothSchemes(page: Page, violations: () => Promise<string[]>): Promise<string[]> {
  const found: string[] = []
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    found.push(...(await violations()).map((v) => `${colorScheme}: ${v}`))
  }
  await page.emulateMedia({ colorScheme: 'light' })
  return found
}

const attestation = (page: Page) => page.locator('#setup-attestation')

t.test('a fresh device: who it is, wrong input refused, then set up and logged in', { skip: noChromium }, async (t) => {
  const app = await openFreshApp(t)
  const opened = Date.now()
  const { page, device } = app
  await attestation(page).waitFor()
  t.ok(await page.locator('#login').isHidden(), 'no login form: nobody could log in')
  const facts = await page.locator('#setup-device dd').allTextContents()
  const version = (await call(`${device.httpUrl!}/api/system/version`)).json
  t.match(facts[0], /^P: with disks and a secure enclave \(hardware .*PPA/, 'the variant, from hwv')
  t.equal(facts[1], device.devid, 'the devid')
  t.equal(facts[2], version.fwv, 'the firmware version')
  t.equal(facts[3], version.blv, 'the boot loader version')
  t.equal(facts[4], `image SHA-256 ${version.uis}`, "the app's image")
  t.match(await attestation(page).textContent(), /^Not provisioned: the device vouches only for itself/)
  t.match(await page.locator('#setup-development-ca').textContent(), /development factory CA.*proves nothing/)
  const served = new X509Certificate(await servedCertificate(device.httpsUrl!))
  t.equal(await page.locator('#setup-fingerprint').textContent(), served.fingerprint256, "the served leaf's SHA-256")
  t.same(await bothSchemes(page, app.violations), [], 'step 1 passes axe, light and dark')

  await page.getByRole('button', { name: 'Next: make it yours' }).click()
  const form = page.locator('#setup form')
  t.equal(await page.getByLabel('Host name').inputValue(), 'hem.local', "hemctl's default host name")
  t.equal(
    await page.getByLabel('Allowed web origin (CORS)').inputValue(),
    new URL(app.url).origin,
    "the page's own origin",
  )
  await page.getByLabel('Owner name').fill('Grace Hopper')
  await page.getByLabel('Contact e-mail').fill('grace@navy')
  await page.getByLabel('User passphrase', { exact: true }).fill(USER_PASS)
  await page.getByLabel('Repeat the user passphrase').fill(`${USER_PASS}!`)
  await page.getByLabel('Master passphrase', { exact: true }).fill(USER_PASS)
  await page.getByLabel('Repeat the master passphrase').fill(USER_PASS)
  await page.getByLabel('Host name').fill('bad_host!')
  await page.getByLabel('Allowed web origin (CORS)').fill('*')
  const posts: string[] = []
  page.on('request', (request) => void (request.method() === 'POST' && posts.push(request.url())))
  await page.getByRole('button', { name: 'Set up the device' }).click()
  await page.getByRole('alert').filter({ hasText: 'Nothing was sent' }).waitFor()
  const errors = await form.locator('.field-error:not([hidden])').allTextContents()
  t.same(
    errors,
    [
      'An e-mail address, like ada@example.com.',
      'The two user passphrases differ.',
      'The master passphrase must differ from the user passphrase.',
      'Must be a host name.',
      'Not * here: it lets every web page you visit call the routes of the device that need no login. ' +
        "Keep this page's origin; the configuration can change it later.",
    ],
    'each wrong field says why',
  )
  t.equal(await form.locator('[aria-invalid="true"]').count(), 5)
  t.match(await page.getByText('Strength:').first().textContent(), /Strength: (strong|very strong)/, 'a meter in words')
  t.same(posts, [], 'nothing was sent')
  t.equal((await call(`${device.httpUrl!}/api/system/status`)).json.inited, false, 'still fresh')
  t.same(await bothSchemes(page, app.violations), [], 'step 2 with its errors passes axe, light and dark')

  await page.getByLabel('Contact e-mail').fill('grace@example.com')
  await page.getByLabel('Repeat the user passphrase').fill(USER_PASS)
  await page.getByLabel('Master passphrase', { exact: true }).fill(MASTER_PASS)
  await page.getByLabel('Repeat the master passphrase').fill(MASTER_PASS)
  await page.getByLabel('Host name').fill('hem.example')
  await page.getByLabel('Allowed web origin (CORS)').fill(new URL(app.url).origin)
  t.equal(await form.locator('[aria-invalid="true"]').count(), 0, 'checked as typed: nothing is marked now')
  const submitted = Date.now()
  await page.getByRole('button', { name: 'Set up the device' }).click()
  await page.locator('#screen-title', { hasText: 'Dashboard' }).waitFor({ timeout: 60_000 })
  t.comment(
    `to the dashboard: ${Date.now() - submitted} ms from "Set up the device" (3 PBKDF2 derivations, init, login), ` +
      `${Date.now() - opened} ms from the page's opening (the checks of this test included)`,
  )
  t.ok((await page.locator('#setup').count()) === 0, 'the wizard is gone, passphrase fields and all')
  t.equal(await page.locator('#who').textContent(), 'Logged in as Grace Hopper (user passphrase).')
  t.same(
    posts.map((url) => new URL(url).pathname),
    ['/api/auth/init', '/api/auth/token'],
    'init, then the login',
  )

  const token = await login(device.httpUrl!, 'system:config')
  const config = (await api(`${device.httpUrl!}/api/system/config`, token)).json
  t.match(config, {
    user: 'Grace Hopper',
    email: 'grace@example.com',
    hostname: 'hem.example',
    origin: new URL(app.url).origin,
    ip: '192.168.7.1/24',
    storage_mode: 0x51,
  })
  t.equal(new URL(app.url).hostname, FRESH_HOST)
  t.same(app.problems, [], 'no script error and no CSP violation')
})

/** The device's attestation request (before provisioning), as the factory gets it. */
async function attestationRequest(device: Device): Promise<{ csr: Uint8Array; genuine: Uint8Array }> {
  const { json } = await call(`${device.httpUrl!}/api/system/config/attestation`)
  return { csr: fromBase64(json.csr), genuine: fromBase64(json.genuine) }
}

t.test('the attestation: genuine, or FAILED naming the check', { skip: noChromium }, async (t) => {
  let otherCa: { crt: string; genuine: string } | undefined
  const app = await openFreshApp(t, {
    beforeOpen: async (device) => {
      const request = await attestationRequest(device)
      const other = await signAttestation(request, await makeCa('Another Factory'))
      otherCa = { crt: toBase64(other.crt), genuine: toBase64(other.genuine) }
      const signed = await signAttestation(request, devCa)
      const answer = await call(`${device.httpUrl!}/api/system/config/provisioning`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ crt: toBase64(signed.crt), genuine: toBase64(signed.genuine) }),
      })
      if (answer.status !== 200) throw new Error(`provisioning refused: ${answer.text}`)
    },
  })
  const { page, device } = app
  await attestation(page).waitFor()
  t.match(
    await attestation(page).textContent(),
    new RegExp(
      `^Genuine: the factory CA "CN=HEM Development Factory CA, O=hemd development" certifies this device's ` +
        `attestation key, and the factory's statement names this device \\(${device.devid}\\)`,
    ),
  )
  t.match(
    await page.locator('#setup-development-ca').textContent(),
    /proves nothing/,
    'and the CA is the published one',
  )
  t.same(await bothSchemes(page, app.violations), [], 'a genuine verdict passes axe')

  const real = (await call(`${device.httpUrl!}/api/system/config/attestation`)).json
  const tampered = fromBase64(real.genuine)
  tampered[tampered.length - 1] = tampered[tampered.length - 1]! ^ 1
  const otherDevice = fromBase64(real.genuine)
  otherDevice[6] = otherDevice[6]! ^ 0xff // the devid's first byte
  const cases: [string, unknown, RegExp][] = [
    [
      'a tampered statement',
      { crt: real.crt, genuine: toBase64(tampered) },
      /^FAILED: the factory's statement is not signed by the factory CA's key\./,
    ],
    [
      "another CA's certificate",
      otherCa,
      /^FAILED: the attestation certificate was issued by "CN=Another Factory", not by the factory CA\./,
    ],
    [
      'a statement about another device',
      { crt: real.crt, genuine: toBase64(otherDevice) },
      /^FAILED: the statement names device [0-9a-f]{16}, not this one/,
    ],
  ]
  for (const [what, answer, words] of cases) {
    await page.route('**/api/system/config/attestation', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(answer) }),
    )
    await page.reload()
    await attestation(page).waitFor()
    t.match(await attestation(page).textContent(), words, what)
    t.match(await attestation(page).getAttribute('class'), /failed/, `${what}: marked as a failure`)
    await page.unroute('**/api/system/config/attestation')
  }
  t.same(await bothSchemes(page, app.violations), [], 'a FAILED verdict passes axe')

  const gets: string[] = []
  page.on('request', (request) => void gets.push(new URL(request.url()).pathname))
  await page.goto(`${device.httpUrl!.replace('127.0.0.1', FRESH_HOST)}/`)
  const refusal = page.locator('#setup .plain-http')
  await refusal.waitFor()
  t.match(await refusal.textContent(), /plain HTTP/, 'over plain HTTP from another host: refused')
  t.equal(await page.locator('#setup input, #setup button').count(), 0, 'nothing to type')
  t.notOk(gets.includes('/api/system/config/attestation'), 'nor anything read for the set-up')
  t.same(await bothSchemes(page, app.violations), [], 'the refusal passes axe')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
