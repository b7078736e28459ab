// A key's operations in Chromium, post-quantum: ML-KEM-768 encapsulate (decapsulated with the API)
// and decapsulate (what @noble/post-quantum encapsulated on the host); an imported ML-KEM public key
// encapsulates (noble decapsulates) and offers nothing else; ML-DSA-44 signs with a context (noble
// verifies) and verifies, a wrong context a result in words. A ciphertext of the wrong length is
// marked and nothing sent; every token exactly the key's scope.
import t from 'tap'
import { ml_dsa44 } from '@noble/post-quantum/ml-dsa.js'
import { ml_kem768 } from '@noble/post-quantum/ml-kem.js'
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
  useApi,
} from './helpers/keyops.js'

t.test('ML-KEM encaps/decaps, ML-DSA sign/verify with a context', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  const kem = await createKey(o.https, gen, { label: 'kem', type: 'MLKEM768' })
  const dsa = await createKey(o.https, gen, { label: 'dsa', type: 'MLDSA44' })
  const host = ml_kem768.keygen()
  const hostKem = await importKey(app, tokens, 'MLKEM768', 'host kem', host.publicKey)
  const pubkey = async (kid: string) => new Uint8Array(await publicKeyOf(app, tokens, kid))
  const ops = keyopsPage(app)
  await app.logIn()
  await app.go('Keys')

  await ops.open(kem)
  t.same(await offered(page), ['Encapsulate a secret (ML-KEM)', 'Decapsulate a secret (ML-KEM)'], 'ML-KEM: the KEM')
  const encaps = await ops.operation('Encapsulate a secret (ML-KEM)')
  await encaps.getByRole('button', { name: 'Encapsulate' }).click()
  await done(page, 'Encapsulated a new shared secret')
  const ss = await outputOf(encaps, 'Shared secret')
  const ct = await outputOf(encaps, 'Ciphertext')
  t.same([ss.length, ct.length], [32, 1088], 'a 32-byte secret and its ML-KEM-768 ciphertext')
  const decapsByApi = await useApi(app, tokens, 'pqc/mlkem/decaps', { kid: kem, ct: b64(ct) })
  t.equal(decapsByApi.json.ss, ss.toString('base64'), 'the API decapsulates the same secret')
  t.same(await bothSchemes(app), [], 'the encapsulation passes axe, light and dark')

  const decaps = await ops.operation('Decapsulate a secret (ML-KEM)')
  const before = ops.sent.length
  await decaps.getByLabel('Ciphertext', { exact: true }).fill(b64(ct.subarray(1)))
  await decaps.getByRole('button', { name: 'Decapsulate' }).click()
  await page.getByRole('alert').filter({ hasText: 'The ciphertext has 1087 bytes; it must have 1088 bytes.' }).waitFor()
  t.equal(await decaps.getByLabel('Ciphertext', { exact: true }).getAttribute('aria-invalid'), 'true', 'marked')
  t.equal(ops.sent.length, before, 'a ciphertext of the wrong length is not sent')
  const onHost = ml_kem768.encapsulate(await pubkey(kem))
  await decaps.getByLabel('Ciphertext', { exact: true }).fill(b64(Buffer.from(onHost.cipherText)))
  await decaps.getByRole('button', { name: 'Decapsulate' }).click()
  await done(page, 'Decapsulated the shared secret.')
  t.same(await outputOf(decaps, 'Shared secret'), Buffer.from(onHost.sharedSecret), 'what noble encapsulated')

  await ops.open(hostKem)
  t.same(await offered(page), ['Encapsulate a secret (ML-KEM)'], 'a public ML-KEM key: encapsulate only')
  const toHost = await ops.operation('Encapsulate a secret (ML-KEM)')
  await toHost.getByRole('button', { name: 'Encapsulate' }).click()
  await done(page, 'Encapsulated a new shared secret')
  t.same(
    Buffer.from(ml_kem768.decapsulate(await outputOf(toHost, 'Ciphertext'), host.secretKey)),
    await outputOf(toHost, 'Shared secret'),
    'the host’s key decapsulates it',
  )

  await ops.open(dsa)
  t.same(await offered(page), ['Sign', 'Verify a signature'], 'ML-DSA: signatures')
  const sign = await ops.operation('Sign')
  t.ok(await sign.getByLabel('Scheme').isHidden(), 'one scheme, the key’s: nothing to choose')
  await sign.getByLabel('Message', { exact: true }).fill('invoice 7')
  await sign.getByLabel('Context', { exact: true }).fill('invoices')
  await sign.getByRole('button', { name: 'Sign' }).click()
  await done(page, 'Signed 9 bytes with MLDSA44.')
  const signature = await outputOf(sign, 'Signature')
  t.equal(signature.length, 2420)
  const msg = Buffer.from('invoice 7')
  const context = Buffer.from('invoices')
  t.ok(ml_dsa44.verify(signature, msg, await pubkey(dsa), { context }), 'noble verifies it under its context')
  const verify = await ops.operation('Verify a signature')
  await verify.getByLabel('Message', { exact: true }).fill('invoice 7')
  await verify.getByLabel('Context', { exact: true }).fill('invoices')
  await verify.getByLabel('Signature', { exact: true }).fill(signature.toString('base64'))
  await verify.getByRole('button', { name: 'Verify' }).click()
  await done(page, 'The signature is valid.')
  await verify.getByLabel('Context', { exact: true }).fill('receipts')
  await verify.getByRole('button', { name: 'Verify' }).click()
  await done(page, 'The signature does NOT match this message.')
  t.ok(await verify.locator('.op-verdict.bad').isVisible(), 'another context: the verdict, in words')
  t.same(await bothSchemes(app), [], 'the ML-DSA verdict passes axe, light and dark')

  t.same(otherScopes(ops), [], 'each under a token of exactly its key’s scope')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
