// An open key in Chromium: its type in words, never the device's raw flags, and its public key
// inline as PEM, which node:crypto reads as the key the device holds, with a copy button that puts
// exactly that PEM on the clipboard.
import { createPublicKey } from 'node:crypto'
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { api, createKey, Tokens } from './helpers/keys.js'

t.test('an open key: type in words, inline PEM, copy', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(app.url).origin })
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  const aes = await createKey(o.https, gen, { type: 'AES256', label: 'vault' })
  const ed = await createKey(o.https, gen, { type: 'ED25519', label: 'signer' })
  const p256 = await createKey(o.https, gen, { type: 'SECP256R1', label: 'both', mode: 'ECDH,ExDSA' })
  await app.logIn()
  await app.go('Keys')

  const type = (kid: string) => page.locator(`ul.key-cards > li[data-kid="${kid}"] dt:text-is("Type") + dd`)
  t.equal(
    await type(aes).textContent(),
    'AES-256 secret key, for encryption and key wrap, made in this device',
    'ATT,PKEY,AES256 in words',
  )
  t.equal(
    await type(p256).textContent(),
    'NIST P-256 private key, for key agreement (ECDH) and ECDSA signatures, made in this device',
    'ATT,PKEY,ECDH,ExDSA,SECP256R1 in words',
  )
  t.notMatch(await page.locator('.key-list').innerText(), /ATT|PKEY|ExDSA|SECP|AES256/, 'no raw type in the list')

  const open = async (kid: string, label: string) => {
    await page.getByRole('button', { name: `Open key ${label} (${kid})` }).click()
    await page.locator('.key-details code.kid-full').filter({ hasText: kid }).waitFor()
  }
  await open(aes, 'vault')
  t.equal(
    await page.locator('.key-details dt:text-is("Type") + dd').textContent(),
    'AES-256 secret key, for encryption and key wrap, made in this device',
    'the details: the same words',
  )
  t.equal(await page.locator('pre.pem').count(), 0, 'a secret key shows no public key')

  for (const [kid, label, curve] of [
    [ed, 'signer', 'ed25519'],
    [p256, 'both', 'ec'],
  ] as const) {
    await open(kid, label)
    const pem = (await page.locator('pre.pem').textContent()) ?? ''
    const raw = Buffer.from(
      (await api(`${o.https}/api/keymgmt/get/${kid}`, await tokens.get('keymgmt:get'))).json.pubkey,
      'base64',
    )
    const key = createPublicKey(pem)
    t.equal(key.asymmetricKeyType, curve, `${label}: the PEM is a ${curve} key`)
    const jwk = key.export({ format: 'jwk' })
    const x = Buffer.from(jwk.x!, 'base64url')
    t.same(
      curve === 'ec' ? Buffer.concat([Buffer.of(2 + (Buffer.from(jwk.y!, 'base64url').at(-1)! & 1)), x]) : x,
      raw,
      `${label}: the device's public key`,
    )
    const copy = page.getByRole('button', { name: 'Copy the PEM' })
    await copy.click()
    await page.getByRole('button', { name: 'Copied' }).waitFor()
    t.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), pem, `${label}: copied`)
  }
  t.notMatch(await page.locator('.key-open').innerText(), /ATT|PKEY|ExDSA|SECP256R1/, 'no raw type in the details')
  await page.getByRole('button', { name: 'Copy the KID' }).click()
  t.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), p256, 'the KID copies whole')
  t.same(await app.violations(), [], 'the PEM shown passes the accessibility check')
  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'dark: the PEM shown passes')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
