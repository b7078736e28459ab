// A key's operations in Chromium, the agreements of an X25519 key: ECDH with a peer chosen in the
// KID picker (which lists the keys of its curve only) or pasted as PEM; encrypt, HMAC and wrap
// under the agreement, each checked on the host with node:crypto (the same ECDH, HKDF, AES-GCM,
// HMAC, RFC 3394); derive with the picker; a wrong KID or no peer marked and nothing sent; an
// imported public key offers nothing of its own. Every token exactly the key's scope.
import t from 'tap'
import {
  createDecipheriv,
  createHash,
  createHmac,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
} from 'node:crypto'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { createKey, Tokens } from './helpers/keys.js'
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

t.test('X25519: ECDH, encrypt, HMAC, wrap with a peer; derive with the picker', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  const mine = await createKey(o.https, gen, { label: 'mine', type: 'CURVE25519' })
  const other = await createKey(o.https, gen, { label: 'other curve', type: 'CURVE448' })
  const host = generateKeyPairSync('x25519')
  const hostRaw = Buffer.from(host.publicKey.export({ format: 'jwk' }).x!, 'base64url')
  const peer = await importKey(app, tokens, 'CURVE25519', 'host peer', hostRaw)
  const minePub = await publicKeyOf(app, tokens, mine)
  const secret = diffieHellman({
    privateKey: host.privateKey,
    publicKey: createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: minePub.toString('base64url') }, format: 'jwk' }),
  })
  const ops = keyopsPage(app)
  await app.logIn()
  await app.go('Keys')

  // An imported public key of the curve: nothing of its own, and the words say where it serves.
  await ops.open(peer)
  t.same(await offered(page), [], 'a public X25519 key offers no operation')
  await page.getByText('choose it as the peer of a private key of its curve').waitFor()

  await ops.open(mine)
  t.same(
    await offered(page),
    ['Encrypt', 'Decrypt', 'Make an HMAC', 'Check an HMAC', 'Agree on a secret (ECDH)', 'Wrap a key', 'Unwrap a key'],
    'a private X25519 key: the agreements',
  )
  const ecdh = await ops.operation('Agree on a secret (ECDH)')
  const choices = await ecdh.getByLabel('Peer key', { exact: true }).locator('option').allTextContents()
  t.same(
    choices,
    ['None chosen: type or paste a KID', `host peer · CURVE25519, public key only · ${peer.slice(0, 8)}…`],
    'the picker lists the keys of its curve that can agree (not the X448 key), with label, type and short KID',
  )
  t.notOk(choices.join().includes(other.slice(0, 8)), 'not another curve')
  t.same(await bothSchemes(app), [], 'the ECDH form and its picker pass axe, light and dark')

  // No peer, then a KID that is none: marked, nothing sent.
  const before = ops.sent.length
  await ecdh.getByRole('button', { name: 'Agree' }).click()
  await page.getByRole('alert').filter({ hasText: 'The peer is needed' }).waitFor()
  await ecdh.getByLabel('Peer key (KID)').fill('1234')
  await ecdh.getByRole('button', { name: 'Agree' }).click()
  await page.getByRole('alert').filter({ hasText: 'A KID is 32 hexadecimal digits' }).waitFor()
  t.equal(await ecdh.getByLabel('Peer key (KID)').getAttribute('aria-invalid'), 'true', 'the KID marked')
  t.equal(ops.sent.length, before, 'nothing sent')

  await ecdh.getByLabel('Peer key', { exact: true }).selectOption(peer)
  t.equal(await ecdh.getByLabel('Peer key (KID)').inputValue(), peer, 'the choice fills the KID')
  await ecdh.getByRole('button', { name: 'Agree' }).click()
  await done(page, 'Agreed on a secret with the peer')
  t.same(await outputOf(ecdh, 'Shared secret'), secret.subarray(0, 32), 'the X25519 secret node:crypto agrees on')
  await ecdh.getByLabel('Peer key (KID)').fill('')
  await ecdh
    .getByLabel('Or the peer’s public key')
    .fill(host.publicKey.export({ format: 'pem', type: 'spki' }).toString())
  await ecdh.getByLabel('Digest of the secret').selectOption('SHA2-256')
  await ecdh.getByRole('button', { name: 'Agree' }).click()
  await done(page, 'Agreed on a secret with the peer')
  t.same(await outputOf(ecdh, 'Shared secret'), createHash('sha256').update(secret).digest(), 'a PEM peer, hashed')

  // Encrypt under the agreement: the host derives the same AES key (HKDF, "encedo-aes" ‖ ctx).
  const encrypt = await ops.operation('Encrypt')
  await encrypt.getByLabel('Message', { exact: true }).fill('to the host')
  await encrypt.getByLabel('Peer key', { exact: true }).selectOption(peer)
  await encrypt.getByLabel('Context', { exact: true }).fill('ctx 1')
  await encrypt.getByRole('button', { name: 'Encrypt' }).click()
  await done(page, 'Encrypted 11 bytes with AES256-GCM.')
  const aes = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), Buffer.from('encedo-aesctx 1'), 32))
  const decipher = createDecipheriv('aes-256-gcm', aes, await outputOf(encrypt, 'IV'))
  decipher.setAuthTag(await outputOf(encrypt, 'Tag'))
  const text = Buffer.concat([decipher.update(await outputOf(encrypt, 'Ciphertext')), decipher.final()])
  t.equal(text.toString(), 'to the host', 'the host decrypts it')

  // HMAC keyed by the raw shared secret; checked in the page.
  const hmac = await ops.operation('Make an HMAC')
  await hmac.getByLabel('Digest').selectOption('SHA2-512')
  await hmac.getByLabel('Peer key (KID)').fill(peer)
  await hmac.getByLabel('Message', { exact: true }).fill('mac me')
  await hmac.getByRole('button', { name: 'Make the HMAC' }).click()
  await done(page, 'Made the HMAC of 6 bytes.')
  const mac = await outputOf(hmac, 'MAC')
  t.same(mac, createHmac('sha512', secret).update('mac me').digest(), 'node:crypto’s HMAC-SHA-512')
  const check = await ops.operation('Check an HMAC')
  await check.getByLabel('Digest').selectOption('SHA2-512')
  await check.getByLabel('Peer key (KID)').fill(peer)
  await check.getByLabel('Message', { exact: true }).fill('mac me')
  await check.getByLabel('MAC', { exact: true }).fill(mac.toString('base64'))
  await check.getByRole('button', { name: 'Check the HMAC' }).click()
  await done(page, 'The MAC matches this message.')

  // Wrap under the agreement's KEK (HKDF, "encedo-kek" ‖ ctx): node:crypto unwraps it.
  const wrap = await ops.operation('Wrap a key')
  const key = Buffer.alloc(32, 0x5a)
  await wrap.getByLabel('Key to wrap', { exact: true }).fill(key.toString('base64'))
  await wrap.getByLabel('Peer key (KID)').fill(peer)
  await wrap.getByRole('button', { name: 'Wrap a key' }).click()
  await done(page, 'Wrapped a key of 32 bytes.')
  const kek = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), Buffer.from('encedo-kek'), 32))
  const unwrapper = createDecipheriv('id-aes256-wrap', kek, Buffer.from('a6a6a6a6a6a6a6a6', 'hex'))
  t.same(Buffer.concat([unwrapper.update(await outputOf(wrap, 'Wrapped key')), unwrapper.final()]), key, 'RFC 3394')
  t.same(await bothSchemes(app), [], 'the agreement forms pass axe, light and dark')

  // Derive: the form's source and peer are pickers too.
  await page.getByRole('button', { name: 'Derive from this key' }).click()
  const deriving = page.getByRole('region', { name: 'Derive a key' })
  t.equal(await deriving.getByLabel('Source key (KID)').inputValue(), mine, 'the source filled in')
  const source = deriving.getByLabel('Source key', { exact: true })
  await source.locator(`option[value="${other}"]`).waitFor({ state: 'attached' })
  t.equal(await source.inputValue(), mine, 'and chosen in its list')
  const peers = deriving.getByLabel('Peer key', { exact: true })
  t.same(
    await peers.locator('option').evaluateAll((options) => options.map((o) => o.getAttribute('value'))),
    ['', peer],
    'its peers: the keys of the source’s curve',
  )
  await peers.selectOption(peer)
  await deriving.getByLabel('Type of the new key').selectOption('AES256')
  await deriving.getByLabel('Label').fill('derived aes')
  await deriving.getByRole('button', { name: 'Derive key' }).click()
  await done(page, `key “derived aes” from ${mine}`)
  t.same(await bothSchemes(app), [], 'the derive form with its pickers passes axe, light and dark')

  t.ok(ops.sent.length >= 6, 'the page called the crypto routes')
  t.same(otherScopes(ops), [], 'each under a token of exactly its key’s scope')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
