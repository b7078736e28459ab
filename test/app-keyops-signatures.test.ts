// A key's operations in Chromium, the signatures: ECDSA on P-256 (DER, checked with node:crypto),
// Ed25519ctx and Ed448 with a context (checked with @noble/curves), a signature made on the host
// verified in the page with an imported public key, which offers verify only; a 406 said as a
// result in words; a missing context marked and nothing sent; every token exactly the key's scope.
import t from 'tap'
import { createPublicKey, ECDH, generateKeyPairSync, sign as nodeSign, verify as nodeVerify } from 'node:crypto'
import { ed25519ctx } from '@noble/curves/ed25519.js'
import { ed448 } from '@noble/curves/ed448.js'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { b64, createKey, Tokens } from './helpers/keys.js'
import {
  bothSchemes,
  done,
  importKey,
  keyopsPage,
  offered,
  otherScopes,
  outputOf,
  publicKeyOf,
} from './helpers/keyops.js'

t.test('sign and verify: ECDSA, EdDSA with a context, an imported public key', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  const p256 = await createKey(o.https, gen, { label: 'p256', type: 'SECP256R1', mode: 'ECDH,ExDSA' })
  const signOnly = await createKey(o.https, gen, { label: 'k1 signer', type: 'SECP256K1', mode: 'ExDSA' })
  const ed = await createKey(o.https, gen, { label: 'ed', type: 'ED25519' })
  const ed4 = await createKey(o.https, gen, { label: 'ed448', type: 'ED448' })
  const host = generateKeyPairSync('ed25519')
  const hostRaw = Buffer.from(host.publicKey.export({ format: 'jwk' }).x!, 'base64url')
  const imported = await importKey(app, tokens, 'ED25519', 'host ed', hostRaw)
  const pubkey = (kid: string) => publicKeyOf(app, tokens, kid)
  const ops = keyopsPage(app)
  await app.logIn()
  await app.go('Keys')

  // ECDSA: what a SECP key of both flags offers; the signature checked by node:crypto.
  await ops.open(p256)
  t.same(
    await offered(page),
    [
      'Sign',
      'Verify a signature',
      'Encrypt',
      'Decrypt',
      'Make an HMAC',
      'Check an HMAC',
      'Agree on a secret (ECDH)',
      'Wrap a key',
      'Unwrap a key',
    ],
    'a SECP key with ECDH and ExDSA: signatures and the agreements',
  )
  t.ok(await page.getByRole('button', { name: 'Derive from this key' }).isVisible(), 'and derive')
  const sign = await ops.operation('Sign')
  t.equal(await sign.getByLabel('Scheme').inputValue(), 'SHA256WithECDSA')
  t.ok(await sign.getByLabel('Context', { exact: true }).isHidden(), 'ECDSA takes no context')
  await sign.getByLabel('Scheme').selectOption('SHA384WithECDSA')
  await sign.getByLabel('Message', { exact: true }).fill('pay 10 to Ada')
  await sign.getByRole('button', { name: 'Sign' }).click()
  await done(page, 'Signed 13 bytes with SHA384WithECDSA.')
  const der = await outputOf(sign, 'Signature')
  const point = ECDH.convertKey(await pubkey(p256), 'prime256v1', undefined, undefined, 'uncompressed') as Buffer
  const p256Key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: b64u(point.subarray(1, 33)), y: b64u(point.subarray(33)) },
    format: 'jwk',
  })
  t.ok(nodeVerify('sha384', Buffer.from('pay 10 to Ada'), p256Key, der), 'node:crypto verifies the DER signature')
  const verify = await ops.operation('Verify a signature')
  await verify.getByLabel('Scheme').selectOption('SHA384WithECDSA')
  await verify.getByLabel('Message', { exact: true }).fill('pay 10 to Ada')
  await verify.getByLabel('Signature', { exact: true }).fill(der.toString('base64'))
  await verify.getByRole('button', { name: 'Verify' }).click()
  await done(page, 'The signature is valid.')
  t.ok(await verify.locator('.op-verdict.good').getByText('The signature is valid.').isVisible(), 'said in words')
  await verify.getByLabel('Message', { exact: true }).fill('pay 99 to Ada')
  await verify.getByRole('button', { name: 'Verify' }).click()
  await done(page, 'The signature does NOT match this message.')
  t.ok(await page.getByRole('alert').isHidden(), 'a 406 is a result, not an error')
  t.same(await bothSchemes(app), [], 'the verdict passes axe, light and dark')

  // A SECP key made for ExDSA only: no agreement.
  await ops.open(signOnly)
  t.same(await offered(page), ['Sign', 'Verify a signature'], 'ExDSA only: signatures only')

  // Ed25519ctx: the context is needed; with it, noble verifies.
  await ops.open(ed)
  t.same(await offered(page), ['Sign', 'Verify a signature'], 'Ed25519: signatures')
  const edSign = await ops.operation('Sign')
  await edSign.getByLabel('Scheme').selectOption('Ed25519ctx')
  await edSign.getByLabel('Message', { exact: true }).fill('hello')
  const before = ops.sent.length
  await edSign.getByRole('button', { name: 'Sign' }).click()
  await page.getByRole('alert').filter({ hasText: 'The context is needed.' }).waitFor()
  t.equal(await edSign.getByLabel('Context', { exact: true }).getAttribute('aria-invalid'), 'true', 'marked')
  t.equal(ops.sent.length, before, 'nothing sent')
  await edSign.getByLabel('Context', { exact: true }).fill('app v1')
  await edSign.getByRole('button', { name: 'Sign' }).click()
  await done(page, 'Signed 5 bytes with Ed25519ctx.')
  const edSig = await outputOf(edSign, 'Signature')
  const ctx = new TextEncoder().encode('app v1')
  t.ok(ed25519ctx.verify(edSig, Buffer.from('hello'), await pubkey(ed), { context: ctx }), 'noble verifies it')

  // Ed448 with a context given in base64.
  await ops.open(ed4)
  const ed4Sign = await ops.operation('Sign')
  t.equal(await ed4Sign.getByLabel('Scheme').inputValue(), 'Ed448')
  await ed4Sign.getByLabel('Message', { exact: true }).fill('hello')
  await ed4Sign.getByLabel('Context given as').selectOption('base64')
  await ed4Sign.getByLabel('Context', { exact: true }).fill(b64(Buffer.from([1, 2, 3])))
  await ed4Sign.getByRole('button', { name: 'Sign' }).click()
  await done(page, 'Signed 5 bytes with Ed448.')
  const ed4Sig = await outputOf(ed4Sign, 'Signature')
  t.equal(ed4Sig.length, 114)
  t.ok(ed448.verify(ed4Sig, Buffer.from('hello'), await pubkey(ed4), { context: Uint8Array.of(1, 2, 3) }), 'noble')

  // An imported public key verifies, and does nothing else.
  await ops.open(imported)
  t.same(await offered(page), ['Verify a signature'], 'a public key: verify only')
  const hostVerify = await ops.operation('Verify a signature')
  const hostSig = nodeSign(null, Buffer.from('from the host'), host.privateKey)
  await hostVerify.getByLabel('Message', { exact: true }).fill('from the host')
  await hostVerify.getByLabel('Signature given as').selectOption('file')
  await hostVerify.getByLabel('Signature file').setInputFiles({ name: 's.bin', mimeType: 'x/y', buffer: hostSig })
  await hostVerify.getByRole('button', { name: 'Verify' }).click()
  await done(page, 'The signature is valid.')
  t.same(await bothSchemes(app), [], 'verify-only key passes axe, light and dark')

  t.ok(ops.sent.length >= 6, 'the page called the crypto routes')
  t.same(otherScopes(ops), [], 'each under a token of exactly its key’s scope')
  t.same(app.problems, [], 'no script error and no CSP violation')
})

const b64u = (bytes: Buffer) => bytes.toString('base64url')
