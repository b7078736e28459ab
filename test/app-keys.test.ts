// The Keys screen in Chromium: the list a page at a time, search by description, import (PEM and
// raw), derive, rename and describe, delete behind a confirmation, the public key downloaded as
// PEM and raw; a device's refusal and the fail state's 409 told in words; HTTPS only.
import { createPublicKey, ECDH, generateKeyPairSync } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import t from 'tap'
import type { Page } from 'playwright-core'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { diagOk, flsShown } from './helpers/diag.js'
import { api, b64, createKey, Tokens } from './helpers/keys.js'
import { FLS } from '../protocol/fail-state.js'
import { dateWords as createdWords } from '../webroot/views/keys/key-text.js'

/** A new key's form, opened by its action's button. */
async function panel(page: Page, name: string) {
  const region = page.getByRole('region', { name })
  if (await region.isHidden()) await page.getByRole('button', { name, exact: true }).click()
  return region
}

const rowKids = (page: Page) =>
  page.locator('ul.key-cards > li').evaluateAll((cards) => cards.map((card) => card.getAttribute('data-kid')))
const card = (page: Page, kid: string) => page.locator(`ul.key-cards > li[data-kid="${kid}"]`)

/** Waits for the status line to say `text` (the end of an action). */
const done = (page: Page, text: string | RegExp) => page.getByRole('status').filter({ hasText: text }).waitFor()

async function download(page: Page, button: string): Promise<{ name: string; bytes: Buffer }> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()])
  return { name: file.suggestedFilename(), bytes: await readFile((await file.path())!) }
}

t.test('list, search, import, derive, rename, delete, download', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  const get = await tokens.get('keymgmt:get')
  const list = await tokens.get('keymgmt:list')
  const getKey = async (kid: string) => api(`${o.https}/api/keymgmt/get/${kid}`, get)
  // More than a page: 15 a page (crypto-contract §1).
  const made: string[] = []
  for (let i = 0; i < 17; i++)
    made.push(
      await createKey(o.https, gen, {
        label: `bulk ${i}`,
        type: 'AES128',
        descr: b64(Buffer.from(i % 5 === 0 ? `needle ${i}` : `hay ${i}`)),
      }),
    )
  const ed = await createKey(o.https, gen, { label: 'signer', type: 'ED25519' })
  const p256 = await createKey(o.https, gen, { label: 'p256', type: 'SECP256R1', mode: 'ECDH,ExDSA' })
  const x25519 = await createKey(o.https, gen, { label: 'agree', type: 'CURVE25519' })
  const mldsa = await createKey(o.https, gen, { label: 'pq', type: 'MLDSA44' })
  made.push(ed, p256, x25519, mldsa)

  await app.logIn()
  await app.go('Keys')
  const range = page.locator('.key-list .range')
  t.equal(await range.textContent(), `Keys 1–15 of ${made.length}`, 'the first page, as "n–m of total"')
  t.same(await rowKids(page), made.slice(0, 15), 'the device’s first page, oldest first')
  const previous = page.getByRole('button', { name: 'Previous page' })
  const next = page.getByRole('button', { name: 'Next page' })
  t.ok(await previous.isDisabled(), 'no page before the first')
  t.same(await app.violations(), [], 'the list passes the accessibility check')
  await next.click()
  await range.filter({ hasText: 'Keys 16–21' }).waitFor()
  t.same(await rowKids(page), made.slice(15), 'the second page')
  const second = (await api(`${o.https}/api/keymgmt/list/15/15`, list)).json
  t.same(
    await card(page, made[15]!).locator('dd').allTextContents(),
    [
      'AES-128 secret key, for encryption and key wrap, made in this device',
      createdWords(second.list[0].created),
      `${made[15]!.slice(0, 8)}…${made[15]!.slice(-4)}`,
      'needle 15',
    ],
    'a card: type in words, created, short KID, description',
  )
  t.equal(second.list[0].descr, b64(Buffer.from('needle 15')), 'the description the device holds, as text')
  t.ok(await next.isDisabled(), 'no page after the last')
  await previous.click()
  await range.filter({ hasText: 'Keys 1–15' }).waitFor()

  // Search (by description here; by label and KID in app-keys-search.test.ts).
  const search = page.getByRole('search')
  await search.getByLabel('Label, description or KID').fill('needle')
  await search.getByRole('button', { name: 'Search' }).click()
  await done(page, '4 keys match.')
  const needles = [0, 5, 10, 15].map((i) => made[i]!)
  t.same(await rowKids(page), needles, 'the keys whose description contains it')
  t.equal(await range.textContent(), 'Matches 1–4 of 4')
  await search.getByLabel('Label, description or KID').fill('no such words')
  await search.getByRole('button', { name: 'Search' }).click()
  await done(page, 'No key matches')
  t.same(await rowKids(page), [], 'no match: an empty list')
  t.same(await app.violations(), [], 'the search passes the accessibility check')
  await page.getByRole('button', { name: 'Show all keys' }).click()
  await done(page, 'All keys shown.')

  // Download the public key as PEM and raw: node:crypto reads the PEM as the key the API shows.
  const open = async (kid: string) => {
    // Two pages: the other one.
    const cell = card(page, kid)
    if (!(await cell.isVisible())) await ((await previous.isEnabled()) ? previous : next).click()
    await cell.waitFor()
    await page.getByRole('button', { name: new RegExp(`^Open key .* \\(${kid}\\)$`) }).click()
    await page.locator('.key-details code.kid-full').filter({ hasText: kid }).waitFor()
  }
  await open(ed)
  const edPub = Buffer.from((await getKey(ed)).json.pubkey, 'base64')
  const edPem = await download(page, 'Download PEM')
  t.equal(edPem.name, `key-${ed}.pem`)
  const edKey = createPublicKey(edPem.bytes.toString())
  t.equal(edKey.asymmetricKeyType, 'ed25519', 'the PEM is an Ed25519 key')
  t.same(Buffer.from(edKey.export({ format: 'jwk' }).x!, 'base64url'), edPub, '...the one the API returns')
  const edRaw = await download(page, 'Download raw')
  t.same([edRaw.name, edRaw.bytes], [`key-${ed}.bin`, edPub], 'raw: the bytes the API returns')
  t.equal(await page.locator('pre.pem').textContent(), edPem.bytes.toString(), 'the PEM shown is the one downloaded')

  await open(p256)
  const p256Pub = Buffer.from((await getKey(p256)).json.pubkey, 'base64')
  const p256Key = createPublicKey((await download(page, 'Download PEM')).bytes.toString())
  const jwk = p256Key.export({ format: 'jwk' })
  t.equal(jwk.crv, 'P-256')
  const uncompressed = ECDH.convertKey(p256Pub, 'prime256v1', undefined, undefined, 'uncompressed') as Buffer
  t.same(
    Buffer.concat([Buffer.of(4), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]),
    uncompressed,
    'a SECP key: the PEM holds the same point',
  )
  await open(mldsa)
  const mldsaPub = Buffer.from((await getKey(mldsa)).json.pubkey, 'base64')
  const mldsaPem = (await download(page, 'Download PEM')).bytes.toString()
  const der = Buffer.from(mldsaPem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64')
  t.same(der.subarray(der.length - mldsaPub.length), mldsaPub, 'ML-DSA: a SubjectPublicKeyInfo around the raw key')
  t.ok(der.includes(Buffer.from('0609608648016503040311', 'hex')), '...with the ML-DSA-44 OID')

  // Import: a PEM (the type read from it), the raw key in base64 (the type chosen).
  const importing = await panel(page, 'Import a public key')
  const edPeer = generateKeyPairSync('ed25519').publicKey
  await importing.getByLabel('Public key').fill(edPeer.export({ format: 'pem', type: 'spki' }).toString())
  t.equal(await importing.getByLabel('Type').inputValue(), 'ED25519', 'the PEM sets the type')
  await importing.getByLabel('Label').fill('imported ed')
  await importing.getByLabel('Description').fill('from a PEM')
  t.same(await app.violations(), [], 'the import form passes the accessibility check')
  await importing.getByRole('button', { name: 'Import key' }).click()
  await done(page, 'Imported the Ed25519 public key “imported ed”')
  const notice = async () => (await page.getByRole('status').textContent()) ?? ''
  const importedEd = /KID ([0-9a-f]{32})/.exec(await notice())![1]!
  const edPeerRaw = Buffer.from(edPeer.export({ format: 'jwk' }).x!, 'base64url')
  t.match((await getKey(importedEd)).json, { type: 'ED25519', pubkey: edPeerRaw.toString('base64') }, 'the key')
  t.ok(await card(page, importedEd).isVisible(), 'the list shows it')

  const xPeer = generateKeyPairSync('x25519').publicKey
  const xRaw = Buffer.from(xPeer.export({ format: 'jwk' }).x!, 'base64url')
  await importing.getByLabel('Type').selectOption('CURVE25519')
  await importing.getByLabel('Public key').fill(xRaw.toString('base64'))
  await importing.getByLabel('Label').fill('peer x')
  await importing.getByLabel('Description').fill('')
  await importing.getByRole('button', { name: 'Import key' }).click()
  await done(page, 'Imported the X25519 public key “peer x”')
  const peer = /KID ([0-9a-f]{32})/.exec(await notice())![1]!
  t.match((await getKey(peer)).json, { type: 'CURVE25519', pubkey: xRaw.toString('base64') }, 'raw base64 too')

  // A refusal of the device's, in its words with its status: the same key again (the form was reset).
  await importing.getByLabel('Type').selectOption('CURVE25519')
  await importing.getByLabel('Public key').fill(xRaw.toString('base64'))
  await importing.getByLabel('Label').fill('peer x again')
  await importing.getByRole('button', { name: 'Import key' }).click()
  const alert = page.getByRole('alert')
  await alert.waitFor()
  t.equal(await alert.textContent(), 'This public key is stored already (HTTP 406)', 'a duplicate: the 406')
  // And one of the form's: a key of the wrong length, before sending.
  await importing.getByLabel('Public key').fill(xRaw.subarray(1).toString('base64'))
  await importing.getByRole('button', { name: 'Import key' }).click()
  await alert.filter({ hasText: 'has 31 bytes' }).waitFor()
  t.equal(await alert.textContent(), 'Not sent: This public key has 31 bytes; the device takes 32 bytes for X25519.')

  // Derive from the X25519 key with the imported peer.
  await open(x25519)
  await page.getByRole('button', { name: 'Derive from this key' }).click()
  const deriving = page.getByRole('region', { name: 'Derive a key' })
  t.equal(await deriving.getByLabel('Source key (KID)').inputValue(), x25519, 'the source filled in')
  await deriving.getByLabel('Peer key (KID)').fill(peer)
  await deriving.getByLabel('Type of the new key').selectOption('ED25519')
  await deriving.getByLabel('Label').fill('derived ed')
  await deriving.getByRole('button', { name: 'Derive key' }).click()
  await done(page, `Derived the Ed25519 key “derived ed” from ${x25519}`)
  const derived = /KID ([0-9a-f]{32})\.$/.exec(await notice())![1]!
  const all = (await api(`${o.https}/api/keymgmt/list/15/15`, list)).json.list as { kid: string; type: string }[]
  t.match(
    all.find((key) => key.kid === derived),
    { type: 'ATT,PKEY,ExDSA,ED25519', label: 'derived ed' },
    'the device holds it',
  )
  // Deriving the same again makes the same key (its KID is its public key's): the device refuses it.
  await deriving.getByRole('button', { name: 'Derive key' }).click()
  await alert.filter({ hasText: 'HTTP 406' }).waitFor()
  t.same(await app.violations(), [], 'the derive form, refused, passes the accessibility check')

  // Rename and describe.
  await open(made[3]!)
  const update = page.locator('form.key-update')
  await update.getByLabel('Label').fill('renamed')
  await update.getByLabel('Description').fill('now described')
  await update.getByRole('button', { name: 'Save label and description' }).click()
  await done(page, `Saved the label and description of ${made[3]}.`)
  t.equal((await getKey(made[3]!)).json.descr, b64(Buffer.from('now described')), 'the new description')
  const first = (await api(`${o.https}/api/keymgmt/list/0/15`, list)).json.list as { kid: string; label: string }[]
  t.equal(first.find((key) => key.kid === made[3])?.label, 'renamed', 'the new label')
  await update.getByLabel('Description').fill('')
  await update.getByRole('button', { name: 'Save label and description' }).click()
  await done(page, `Saved the label and description of ${made[3]}.`)
  t.notOk('descr' in (await getKey(made[3]!)).json, 'an empty description removes it')

  // Delete: cancel first, then confirm.
  await page.getByRole('button', { name: 'Delete key…' }).click()
  const dialog = page.getByRole('dialog', { name: 'Delete the key “renamed”?' })
  await dialog.waitFor()
  t.equal(
    await page.evaluate(() => (globalThis as any).document.activeElement.textContent),
    'Cancel',
    'focus on Cancel',
  )
  t.same(await app.violations(), [], 'the confirmation passes the accessibility check')
  await page.keyboard.press('Enter')
  await dialog.waitFor({ state: 'detached' })
  t.equal((await getKey(made[3]!)).status, 200, 'cancelled: the key is still there')
  await page.getByRole('button', { name: 'Delete key…' }).click()
  await dialog.waitFor()
  await page.keyboard.press('Escape')
  await dialog.waitFor({ state: 'detached' })
  t.equal((await getKey(made[3]!)).status, 200, 'Escape cancels too')
  await page.getByRole('button', { name: 'Delete key…' }).click()
  await dialog.getByRole('button', { name: 'Delete the key' }).click()
  await done(page, `Deleted the key “renamed” (${made[3]}).`)
  t.equal((await getKey(made[3]!)).status, 404, 'confirmed: the key is gone')
  t.notOk(await card(page, made[3]!).isVisible(), 'and gone from the list')
  t.equal(await range.textContent(), `Keys 1–15 of ${made.length + 2}`, 'the count follows')
  t.same(app.problems, [], 'no script error and no CSP violation')
})

t.test('the fail state: 409 in words', { skip: noChromium }, async (t) => {
  const app = await openApp(t, { boot: { diag: true } })
  const { page, o } = app
  await app.logIn()
  await app.go('Keys')
  t.equal(await page.locator('.key-list .range').textContent(), 'No keys yet.', 'an empty repository')
  await diagOk(o.base, 'break_temp')
  await flsShown(o.base, FLS.TEMPERATURE)
  const create = await panel(page, 'Create a key')
  await create.getByLabel('Label').fill('too late')
  await create.getByRole('button', { name: 'Create key' }).click()
  const alert = page.getByRole('alert')
  await alert.waitFor()
  t.equal(
    await alert.textContent(),
    'The device is in its fail state (the temperature is out of range) and refuses every key operation until ' +
      'the fault is cleared (HTTP 409)',
    'the 409 in words',
  )
  t.ok(await page.locator('#fail-banner').isVisible(), 'and the banner shows the fail state')
  await app.go('Dashboard')
  await app.go('Keys')
  t.match(await alert.textContent(), /^The device is in its fail state .* \(HTTP 409\)$/, 'the list too')
  t.same(app.problems, [], 'no script error and no CSP violation')
})

t.test('over plain HTTP: a link to HTTPS', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  let keyRequests = 0
  page.on('request', (request) => {
    if (request.url().includes('/api/keymgmt/')) keyRequests++
  })
  // From loopback: elsewhere, plain HTTP refuses the login itself (app-http-refusal.test.ts).
  await page.goto(`${o.base}/#/keys`)
  await app.logIn()
  await app.go('Keys')
  const link = page.getByRole('link', { name: 'Open this screen over HTTPS' })
  const https = `${o.https}/#/keys`
  t.equal(await link.getAttribute('href'), https, 'the HTTPS address of the screen, at its port')
  t.equal(keyRequests, 0, 'no key request over HTTP')
  t.same(await app.violations(), [])
  t.same(app.problems, [])
})
