// The Keys screen's primary action in Chromium: "Create a key" is the first thing on the screen, a
// button above the list that opens its form; after a create (and an import) the form starts afresh,
// and the new key's card is marked, scrolled to and focused; in light and dark.
import { generateKeyPairSync } from 'node:crypto'
import t from 'tap'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { createKey, Tokens } from './helpers/keys.js'

t.test('create is the primary action; the form resets; the new key is marked', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const gen = await new Tokens(o.base).get('keymgmt:gen')
  // Two pages: the new key lands on the second, away from where the owner stands.
  for (let i = 0; i < 16; i++) await createKey(o.https, gen, { type: 'AES128', label: `old ${i}` })
  await page.setViewportSize({ width: 1000, height: 700 })
  await app.logIn()
  await app.go('Keys')

  const view = page.locator('#view')
  const first = view.getByRole('button').first()
  t.equal(await first.textContent(), 'Create a key', 'the first button on the screen')
  t.equal(await first.getAttribute('class'), 'primary', 'styled as the primary action')
  const [createBox, listBox] = await Promise.all([first.boundingBox(), page.locator('.key-list').boundingBox()])
  t.ok(createBox!.y < listBox!.y, 'above the list')
  t.equal(await view.locator('details, summary').count(), 0, 'nothing collapsed to find it in')
  for (const other of ['Import a public key', 'Derive a key'])
    t.ok(await view.getByRole('button', { name: other, exact: true }).isVisible(), `${other}: reachable beside it`)

  await first.click()
  t.equal(await first.getAttribute('aria-expanded'), 'true', 'the button says its form is open')
  const create = page.getByRole('region', { name: 'Create a key' })
  await create.waitFor()
  t.equal(
    await page.evaluate(() => (globalThis as any).document.activeElement.getAttribute('name')),
    'type',
    'the form’s first field has the focus',
  )
  t.same(await app.violations(), [], 'the open form passes the accessibility check')
  await create.getByLabel('Type').selectOption('SECP384R1')
  await create.getByLabel('ExDSA: ECDSA signatures').check()
  await create.getByLabel('Label').fill('fresh key')
  await create.getByLabel('Description').fill('made just now')
  await create.getByRole('button', { name: 'Create key' }).click()
  const done = page.getByRole('status').filter({ hasText: 'Created the NIST P-384 key “fresh key”' })
  await done.waitFor()
  const kid = /KID ([0-9a-f]{32})\./.exec((await done.textContent()) ?? '')![1]!

  t.same(
    {
      type: await create.getByLabel('Type').inputValue(),
      label: await create.getByLabel('Label').inputValue(),
      descr: await create.getByLabel('Description').inputValue(),
      ecdh: await create.getByLabel('ECDH: key agreement and derive').isChecked(),
      exdsa: await create.getByLabel('ExDSA: ECDSA signatures').isChecked(),
      mode: await create.getByRole('group', { name: 'Use (mode)' }).isVisible(),
    },
    { type: 'AES128', label: '', descr: '', ecdh: true, exdsa: false, mode: false },
    'the create form starts afresh',
  )

  const marked = page.locator('ul.key-cards > li.new-key')
  t.equal(await marked.getAttribute('data-kid'), kid, 'the new key is the one marked')
  t.equal(await marked.locator('h4').textContent(), 'fresh key (new)', 'marked in words, not by colour alone')
  t.equal(await page.locator('.key-list .range').textContent(), 'Keys 16–17 of 17', 'on the page that holds it')
  t.ok(
    await marked.evaluate((card) => card === (globalThis as any).document.activeElement),
    'the new key has the focus',
  )
  t.ok(await marked.isVisible(), 'and is in view')
  t.ok((await marked.boundingBox())!.y + 10 < 700, 'scrolled to: on the screen')
  t.same(await app.violations(), [], 'the marked key passes the accessibility check')
  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'dark: the marked key passes')
  await page.emulateMedia({ colorScheme: 'light' })

  // Import: the form starts afresh too, and the imported key is the one marked.
  await page.getByRole('button', { name: 'Import a public key', exact: true }).click()
  t.ok(await create.isHidden(), 'one form open at a time')
  const importing = page.getByRole('region', { name: 'Import a public key' })
  const pem = generateKeyPairSync('ed448').publicKey.export({ format: 'pem', type: 'spki' }).toString()
  await importing.getByLabel('Public key').fill(pem)
  await importing.getByLabel('Label').fill('their key')
  await importing.getByRole('button', { name: 'Import key' }).click()
  const imported = page.getByRole('status').filter({ hasText: 'Imported the Ed448 public key “their key”' })
  await imported.waitFor()
  const importedKid = /KID ([0-9a-f]{32})\./.exec((await imported.textContent()) ?? '')![1]!
  t.same(
    [await importing.getByLabel('Public key').inputValue(), await importing.getByLabel('Label').inputValue()],
    ['', ''],
    'the import form starts afresh',
  )
  t.equal(await marked.getAttribute('data-kid'), importedKid, 'the imported key is marked now')
  t.equal(await marked.count(), 1, 'and only it')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
