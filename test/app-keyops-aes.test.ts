// A key's operations in Chromium, the AES family: encrypt and decrypt in each mode (GCM with its
// AAD, IV and tag; CBC; ECB), wrap and unwrap; what the page made checked with the device's API,
// and what the API made used in the page. Wrong input (bad base64, a file over the device's limit,
// a missing tag, ECB on a partial block) is marked and nothing sent; every token the page sent is
// exactly the key's scope; axe in light and dark; no CSP violation. The time of an encrypt is noted.
import t from 'tap'
import { performance } from 'node:perf_hooks'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { b64, createKey, Tokens } from './helpers/keys.js'
import { bothSchemes, done, keyopsPage, offered, otherScopes, outputOf, useApi } from './helpers/keyops.js'

t.test('AES: encrypt, decrypt, wrap, unwrap from the key’s details', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const tokens = new Tokens(o.base)
  const kid = await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'vault', type: 'AES256' })
  const ops = keyopsPage(app)
  await app.logIn()
  await app.go('Keys')
  await ops.open(kid)
  t.same(await offered(page), ['Encrypt', 'Decrypt', 'Wrap a key', 'Unwrap a key'], 'what AES keys do, only that')

  // GCM with an AAD, then decrypted in the form the output fills.
  const encrypt = await ops.operation('Encrypt')
  t.equal(await encrypt.getByLabel('Mode').inputValue(), 'AES256-GCM', 'the key’s width and GCM first')
  await encrypt.getByLabel('Message', { exact: true }).fill('Grüße aus dem Gerät')
  await encrypt.getByLabel('Associated data', { exact: true }).fill('header v1')
  let started = performance.now()
  await encrypt.getByRole('button', { name: 'Encrypt' }).click()
  await done(page, 'Encrypted 22 bytes with AES256-GCM.')
  const first = performance.now() - started
  t.same(await bothSchemes(app), [], 'the encrypt output passes axe, light and dark')
  const ciphertext = await outputOf(encrypt, 'Ciphertext')
  const iv = await outputOf(encrypt, 'IV')
  const tag = await outputOf(encrypt, 'Tag')
  t.same([ciphertext.length, iv.length, tag.length], [22, 16, 16], 'ciphertext, IV and tag shown')
  const plain = await useApi(app, tokens, 'cipher/decrypt', {
    kid,
    alg: 'AES256-GCM',
    msg: b64(ciphertext),
    iv: b64(iv),
    tag: b64(tag),
    aad: b64(Buffer.from('header v1')),
  })
  t.equal(Buffer.from(plain.json.plaintext, 'base64').toString(), 'Grüße aus dem Gerät', 'the API decrypts it')
  started = performance.now()
  await encrypt.getByRole('button', { name: 'Encrypt' }).click()
  await done(page, 'Encrypted 22 bytes with AES256-GCM.')
  t.comment(
    `an encrypt in the page: ${first.toFixed(0)} ms with the key's token minted, ` +
      `${(performance.now() - started).toFixed(0)} ms after`,
  )

  await encrypt.getByRole('button', { name: 'Decrypt it in the form below' }).click()
  const decrypt = await ops.operation('Decrypt')
  await decrypt.getByLabel('Associated data', { exact: true }).fill('header v1')
  await decrypt.getByRole('button', { name: 'Decrypt' }).click()
  await done(page, 'Decrypted 22 bytes with AES256-GCM.')
  t.equal(await decrypt.locator('pre.op-text').textContent(), 'Grüße aus dem Gerät', 'the plaintext, as text')
  t.same(await outputOf(decrypt, 'Plaintext'), Buffer.from('Grüße aus dem Gerät'), 'and in base64')
  t.ok(await decrypt.getByRole('button', { name: 'Copy the plaintext as text' }).isVisible(), 'a copy button')
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    decrypt.getByRole('button', { name: 'Download the plaintext' }).click(),
  ])
  t.equal(file.suggestedFilename(), 'plaintext.bin', 'a download')
  t.same(await bothSchemes(app), [], 'the decrypt output passes axe, light and dark')
  await page.setViewportSize({ width: 390, height: 800 })
  // The key table is the list's own (it scrolls in its box); the operations must fit.
  const wide = await page
    .locator('.key-open *')
    .evaluateAll((all) =>
      all
        .filter((e) => e.getBoundingClientRect().right > 391)
        .map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`),
    )
  t.same(wide, [], 'at 390 px, the forms and their outputs do not scroll sideways')
  await page.setViewportSize({ width: 1280, height: 800 })

  // CBC made by the API, decrypted in the page from pasted base64; the IV from a file.
  const cbc = await useApi(app, tokens, 'cipher/encrypt', { kid, alg: 'AES128-CBC', msg: b64(Buffer.from('cbc text')) })
  await decrypt.getByLabel('Mode').selectOption('AES128-CBC')
  t.ok(await decrypt.getByLabel('Tag', { exact: true }).isHidden(), 'CBC has no tag')
  await decrypt.getByLabel('Ciphertext', { exact: true }).fill(cbc.json.ciphertext)
  await decrypt.getByLabel('IV given as').selectOption('file')
  await decrypt.getByLabel('IV file').setInputFiles({
    name: 'iv.bin',
    mimeType: 'application/octet-stream',
    buffer: Buffer.from(cbc.json.iv, 'base64'),
  })
  await decrypt.getByRole('button', { name: 'Decrypt' }).click()
  await done(page, 'Decrypted 8 bytes with AES128-CBC.')
  t.equal(await decrypt.locator('pre.op-text').textContent(), 'cbc text', 'CBC from the API, decrypted here')

  // Wrong input: nothing is sent, and the field says why.
  const before = ops.sent.length
  const alert = page.getByRole('alert')
  await decrypt.getByLabel('Mode').selectOption('AES256-GCM')
  await decrypt.getByLabel('Ciphertext', { exact: true }).fill('not base64!')
  await decrypt.getByLabel('IV given as').selectOption('base64')
  await decrypt.getByLabel('IV', { exact: true }).fill(b64(iv))
  await decrypt.getByLabel('Tag', { exact: true }).fill('')
  await decrypt.getByRole('button', { name: 'Decrypt' }).click()
  await alert.filter({ hasText: 'Not sent' }).waitFor()
  t.equal(
    await alert.textContent(),
    'Not sent: The ciphertext is not base64 (A–Z, a–z, 0–9, + and /, padded with =). The tag is needed.',
    'bad base64 and a missing tag, said',
  )
  t.equal(await decrypt.getByLabel('Ciphertext', { exact: true }).getAttribute('aria-invalid'), 'true', 'marked')
  t.equal(await decrypt.getByLabel('Tag', { exact: true }).getAttribute('aria-invalid'), 'true', 'marked')
  t.same(await bothSchemes(app), [], 'the marked form passes axe, light and dark')

  await encrypt.getByLabel('Message given as').selectOption('file')
  await encrypt.getByLabel('Message file').setInputFiles({
    name: 'big.bin',
    mimeType: 'application/octet-stream',
    buffer: Buffer.alloc(2049, 7),
  })
  const tooLarge = 'The file has 2049 bytes; the device takes at most 2048 bytes here.'
  await encrypt.getByText(tooLarge).waitFor()
  t.equal(await encrypt.getByLabel('Message file').getAttribute('aria-invalid'), 'true', 'a file too large, at once')
  await encrypt.getByRole('button', { name: 'Encrypt' }).click()
  await alert.filter({ hasText: tooLarge }).waitFor()
  await encrypt.getByLabel('Message given as').selectOption('text')
  await encrypt.getByLabel('Mode').selectOption('AES192-ECB')
  t.ok(await encrypt.getByLabel('Associated data', { exact: true }).isHidden(), 'no AAD but with GCM')
  await encrypt.getByRole('button', { name: 'Encrypt' }).click()
  await alert.filter({ hasText: 'whole number of 16-byte blocks' }).waitFor()
  t.equal(ops.sent.length, before, 'none of them was sent')

  // ECB of a whole block, from a file.
  await encrypt.getByLabel('Message given as').selectOption('file')
  await encrypt
    .getByLabel('Message file')
    .setInputFiles({ name: 'b.bin', mimeType: 'text/plain', buffer: Buffer.alloc(32, 1) })
  await encrypt.getByRole('button', { name: 'Encrypt' }).click()
  await done(page, 'Encrypted 32 bytes with AES192-ECB.')
  t.ok(await encrypt.getByRole('heading', { name: /^IV/ }).isHidden(), 'ECB: no IV')

  // Wrap in the page, unwrap with the API; unwrap in the page what the API wrapped.
  const secret = Buffer.from('00112233445566778899aabbccddeeff0011223344556677', 'hex')
  const wrap = await ops.operation('Wrap a key')
  await wrap.getByLabel('Key to wrap', { exact: true }).fill(b64(secret))
  await wrap.getByLabel('Key-encryption key width').selectOption('AES128')
  await wrap.getByRole('button', { name: 'Wrap a key' }).click()
  await done(page, 'Wrapped a key of 24 bytes.')
  const wrapped = await outputOf(wrap, 'Wrapped key')
  const unwrappedByApi = await useApi(app, tokens, 'cipher/unwrap', { kid, alg: 'AES128', msg: b64(wrapped) })
  t.same(Buffer.from(unwrappedByApi.json.unwrapped, 'base64'), secret, 'the API unwraps what the page wrapped')
  const iv8 = Buffer.from('0102030405060708', 'hex')
  const byApi = await useApi(app, tokens, 'cipher/wrap', { kid, msg: b64(secret), iv: b64(iv8) })
  const unwrap = await ops.operation('Unwrap a key')
  await unwrap.getByLabel('Wrapped key', { exact: true }).fill(byApi.json.wrapped)
  await unwrap.getByLabel('IV', { exact: true }).fill(b64(iv8))
  await unwrap.getByRole('button', { name: 'Unwrap a key' }).click()
  await done(page, 'Unwrapped a key of 24 bytes; its integrity check passed.')
  t.same(await outputOf(unwrap, 'Unwrapped key'), secret, 'the page unwraps what the API wrapped')
  t.same(await bothSchemes(app), [], 'wrap and unwrap pass axe, light and dark')

  t.ok(ops.sent.length >= 7, 'the page called the crypto routes')
  t.same(otherScopes(ops), [], 'each under a token of exactly the key’s scope')
  t.same([...new Set(ops.sent.map((s) => s.scope))], [`keymgmt:use:${kid}`], 'the key’s own, no broader one')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
