// A key's operations in Chromium, an HMAC key (SHA3-256): make an HMAC (checked with the device's
// API) and check one in the page (made with the API), a mismatch said in words; bad base64 marked
// and nothing sent; every token exactly the key's scope.
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { b64, createKey, Tokens } from './helpers/keys.js'
import { bothSchemes, done, keyopsPage, offered, otherScopes, outputOf, useApi } from './helpers/keyops.js'

t.test('HMAC: make and check with an HMAC key', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const tokens = new Tokens(o.base)
  const kid = await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'mac', type: 'SHA3-256' })
  const ops = keyopsPage(app)
  await app.logIn()
  await app.go('Keys')
  await ops.open(kid)
  t.same(await offered(page), ['Make an HMAC', 'Check an HMAC'], 'an HMAC key: HMACs only')

  const make = await ops.operation('Make an HMAC')
  t.ok(await make.getByLabel('Digest').isHidden(), 'the key’s type is the digest: nothing to choose')
  await make.getByLabel('Message', { exact: true }).fill('ledger line 1')
  await make.getByRole('button', { name: 'Make the HMAC' }).click()
  await done(page, 'Made the HMAC of 13 bytes.')
  const mac = await outputOf(make, 'MAC')
  t.equal(mac.length, 32, 'SHA3-256: 32 bytes')
  const byApi = await useApi(app, tokens, 'hmac/verify', { kid, msg: b64(Buffer.from('ledger line 1')), mac: b64(mac) })
  t.equal(byApi.status, 200, 'the API checks it')

  const made = await useApi(app, tokens, 'hmac/hash', { kid, msg: b64(Buffer.from('ledger line 2')) })
  const check = await ops.operation('Check an HMAC')
  await check.getByLabel('Message', { exact: true }).fill('ledger line 2')
  const before = ops.sent.length
  await check.getByLabel('MAC', { exact: true }).fill('%%%')
  await check.getByRole('button', { name: 'Check the HMAC' }).click()
  await page.getByRole('alert').filter({ hasText: 'The MAC is not base64' }).waitFor()
  t.equal(await check.getByLabel('MAC', { exact: true }).getAttribute('aria-invalid'), 'true', 'marked')
  t.equal(ops.sent.length, before, 'nothing sent')
  await check.getByLabel('MAC', { exact: true }).fill(made.json.mac)
  await check.getByRole('button', { name: 'Check the HMAC' }).click()
  await done(page, 'The MAC matches this message.')
  await check.getByLabel('Message', { exact: true }).fill('ledger line 3')
  await check.getByRole('button', { name: 'Check the HMAC' }).click()
  await done(page, 'The MAC does NOT match this message.')
  t.ok(await page.getByRole('alert').isHidden(), 'a mismatch is a result, not an error')
  t.same(await bothSchemes(app), [], 'the verdict passes axe, light and dark')

  t.same(otherScopes(ops), [], 'each under a token of exactly the key’s scope')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
