// The Keys screen in Chromium, creating: a key of each kind the contract names, and of each SECP
// curve with its own mode, through the form, each checked with the API; a label the contract
// refuses stopped before anything is sent.
import t from 'tap'
import { gotType, keyTypes, listedType, type KeyMode, type KeyType } from '../protocol/key-types.js'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { api, b64, Tokens } from './helpers/keys.js'

/** The SECP curves' `mode` asked for: both flags, ExDSA alone, ECDH alone (the default), none (ECDH). */
const MODES: Partial<Record<KeyType, [ecdh: boolean, exdsa: boolean]>> = {
  SECP256R1: [true, true],
  SECP384R1: [false, true],
  SECP521R1: [true, false],
  SECP256K1: [false, false],
}

t.test('create a key of each kind, and of each SECP curve, through the form', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  await app.logIn()
  await app.go('Keys')
  await page.getByRole('button', { name: 'Create a key', exact: true }).click()
  const create = page.getByRole('region', { name: 'Create a key' })
  t.same(await app.violations(), [], 'the create form passes the accessibility check')

  let sent = 0
  page.on('request', (request) => {
    if (request.url().endsWith('/api/keymgmt/create')) sent++
  })
  const label = create.getByLabel('Label')
  await label.fill('Schlüssel')
  await create.getByRole('button', { name: 'Create key' }).click()
  const alert = page.getByRole('alert')
  t.equal(
    await alert.textContent(),
    'Not sent: The label must be 1 to 32 printable ASCII characters: letters, digits, spaces and punctuation.',
    'a label with a non-ASCII letter, refused in words',
  )
  t.equal(await label.getAttribute('aria-invalid'), 'true', 'the field is marked')
  t.ok(await create.getByText('The label must be 1 to 32').isVisible(), 'and explained next to it')
  await label.fill('x'.repeat(33))
  await create.getByLabel('Description').fill('d'.repeat(65))
  await create.getByRole('button', { name: 'Create key' }).click()
  await alert.filter({ hasText: 'this one is 65' }).waitFor()
  t.match(await alert.textContent(), /^Not sent: The label must be .* The description must be at most 64 bytes/)
  t.same(await app.violations(), [], 'the refused form passes the accessibility check')
  t.equal(sent, 0, 'no request was made')

  const tokens = new Tokens(o.base)
  const list = await tokens.get('keymgmt:list')
  const get = await tokens.get('keymgmt:get')
  const all = Object.keys(keyTypes) as KeyType[]
  t.equal(all.length, 23, 'the contract names 23 types')
  t.same(
    await create
      .getByLabel('Type')
      .locator('option')
      .evaluateAll((options) => options.map((o) => o.getAttribute('value'))),
    all,
    'the form offers every one',
  )
  // The form tells types apart by their kind alone (key-spec-fields.ts: the select grouped by kind, the
  // mode shown for kind 'ec' only): one type of each kind, and each SECP curve with a mode of its own.
  // That every type is made as asked is shown over the API, type by type (keymgmt-*.test.ts).
  const types = all.filter((type) => MODES[type] || all.find((o) => keyTypes[o].kind === keyTypes[type].kind) === type)
  t.equal(types.length, 10, 'six kinds, four curves')
  for (const type of types) {
    await create.getByLabel('Type').selectOption(type)
    const flags = MODES[type]
    if (flags) {
      await create.getByLabel('ECDH: key agreement and derive').setChecked(flags[0])
      await create.getByLabel('ExDSA: ECDSA signatures').setChecked(flags[1])
    } else t.ok(await create.getByRole('group', { name: 'Use (mode)' }).isHidden(), `${type}: no mode to choose`)
    await label.fill(`new ${type}`)
    await create.getByLabel('Description').fill(`made as ${type}`)
    await create.getByRole('button', { name: 'Create key' }).click()
    const done = page.getByRole('status').filter({ hasText: `“new ${type}”` })
    await done.waitFor()
    const kid = /KID ([0-9a-f]{32})\./.exec((await done.textContent()) ?? '')?.[1] ?? ''
    const mode: KeyMode | undefined = flags
      ? flags[0] && flags[1]
        ? 'ECDH,ExDSA'
        : flags[1]
          ? 'ExDSA'
          : 'ECDH'
      : undefined
    const page15 = await api(`${o.https}/api/keymgmt/search`, await tokens.get('keymgmt:search'), {
      descr: b64(Buffer.from(`made as ${type}`)),
    })
    t.match(
      page15.json.list,
      [{ kid, label: `new ${type}`, type: listedType(type, mode, true), descr: b64(Buffer.from(`made as ${type}`)) }],
      `${type}: the device holds it as asked`,
    )
    const details = (await api(`${o.https}/api/keymgmt/get/${kid}`, get)).json
    t.equal(details.type, gotType(type), `${type}: get's type`)
    const info = keyTypes[type] as { publicKey?: number }
    t.equal(
      details.pubkey === undefined ? undefined : Buffer.from(details.pubkey, 'base64').length,
      info.publicKey,
      `${type}: ${info.publicKey ? 'its public key' : 'no public key'}`,
    )
    t.ok(await page.locator(`ul.key-cards > li[data-kid="${kid}"]`).isVisible(), `${type}: the list shows it`)
  }
  t.equal((await api(`${o.https}/api/keymgmt/list`, list)).json.total, types.length, 'and nothing else was made')
  t.equal(sent, types.length, 'one request per key')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
