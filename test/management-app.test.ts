// The management app (webroot/) built, shipped as a signed webroot.tar through the upgrade
// pipeline, and used in headless Chromium as its owner would: log in, read, lock and unlock.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { derivePassphraseKey, derivePassphraseKeyAsync } from '../client/index.js'
import { buildWebroot } from '../deploy/build-webroot.js'
import { noChromium, openPage } from './helpers/browser.js'
import { repoRoot } from './helpers/device.js'
import { api } from './helpers/keys.js'
import { login, owned, USER_PASS } from './helpers/owner.js'
import { until } from './helpers/until.js'
import { imageOf, upload } from './helpers/upload.js'

t.test('without crypto.subtle (a page over plain HTTP from a LAN address) the key is the same', async (t) => {
  const expected = derivePassphraseKey(USER_PASS, 'an eid')
  const webCrypto = Object.getOwnPropertyDescriptor(globalThis, 'crypto')!
  // What a browser leaves outside a secure context: random numbers, no subtle.
  const insecure = { getRandomValues: globalThis.crypto.getRandomValues.bind(globalThis.crypto) }
  Object.defineProperty(globalThis, 'crypto', { value: insecure, configurable: true })
  try {
    t.same(await derivePassphraseKeyAsync(USER_PASS, 'an eid'), expected)
  } finally {
    Object.defineProperty(globalThis, 'crypto', webCrypto)
  }
})

t.test('the app, installed on a P device, in Chromium', { skip: noChromium }, async (t) => {
  const root = t.testdir({ data: {}, webroot: {} })
  const webroot = join(root, 'webroot')
  await buildWebroot(webroot)
  const { version } = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
  // The test owner's configuration names one foreign origin: the app, of the device's own, still logs in.
  const o = await owned(t, { variant: 'P', dataDir: join(root, 'data') })
  const upgrade = await login(o.base, 'system:upgrade')
  t.equal(
    (await upload(o.base, 'ui', await imageOf(webroot, 'ui', version, ['P']), {}, upgrade)).status,
    200,
    'uploaded',
  )
  await until(
    'the image verifies',
    async () => (await api(`${o.base}/api/system/upgrade/check_ui`, upgrade)).status === 200,
  )
  t.equal((await api(`${o.base}/api/system/upgrade/install_ui`, upgrade)).status, 200, 'installed')

  // At its configured hostname (helpers/owner.ts): the device's own origin is that name, never the Host sent.
  const { page, problems } = await openPage(t, ['hem.example'])
  await page.goto(o.base.replace('127.0.0.1', 'hem.example'))
  const notice = (text: string) => page.getByRole('status').filter({ hasText: text }).waitFor()
  await page.locator('#status dt', { hasText: 'fls_state' }).waitFor()
  t.notOk(
    await page.locator('#status dt', { hasText: 'repo_stats' }).count(),
    'before login: the status anyone may read',
  )

  await page.getByLabel('Passphrase').fill('not the passphrase')
  await page.getByRole('button', { name: 'Log in' }).click()
  const alert = page.getByRole('alert')
  await alert.waitFor()
  t.match(
    await alert.textContent(),
    /^Login refused: Authentication failed\. Check the passphrase\.$/,
    'a wrong passphrase, in plain words',
  )
  t.equal(await page.getByLabel('Passphrase').inputValue(), '', 'the passphrase left the field')

  await page.getByLabel('Passphrase').fill(USER_PASS)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.getByText('Logged in as Ada.').waitFor()
  await page.locator('#logs li').first().waitFor()
  t.ok(await alert.isHidden(), 'the error is gone')
  t.ok(await page.locator('#login').isHidden(), 'the login form is gone')

  const status = (await api(`${o.base}/api/system/status`, undefined)).json
  const deviceVersion = (await api(`${o.base}/api/system/version`, o.token)).json
  const field = async (list: string, name: string) =>
    page
      .locator(`#${list} dt`, { hasText: new RegExp(`^${name}$`) })
      .locator('xpath=following-sibling::dd[1]')
      .textContent()
  t.equal(await field('version', 'fwv'), deviceVersion.fwv, 'the firmware version')
  t.equal(await field('version', 'sd_cid'), deviceVersion.sd_cid, 'with the extras a token shows')
  t.equal(await field('version', 'uis'), deviceVersion.uis, 'and the app it is running')
  t.equal(await field('status', 'fls_state'), String(status.fls_state), 'the status')
  t.match(await field('status', 'repo_stats'), /^total: \d+, /, 'with the extras a token shows')
  const rows = await page.locator('#disks tr').allTextContents()
  t.match(
    rows,
    [/^Disk 0131072 sectors \(64 MiB\)unlocked, read-only/, /^Disk 1\d+ sectors \(\d+ MiB\)locked/],
    'both disks, as status.storage has them',
  )
  t.match(status.storage, ['131072:ro', /^\d+:-$/], 'which says so')
  const logs = (await api(`${o.base}/api/logger/list`, await login(o.base, 'logger:get'))).json
  t.same(await page.locator('#logs li').allTextContents(), logs.id, 'the audit log list')

  const disk1 = async () => ((await api(`${o.base}/api/system/status`, undefined)).json.storage as string[])[1]
  await page.getByRole('button', { name: 'Unlock Disk 1 read-write', exact: true }).click()
  await notice('Disk 1 is unlocked, read-write.')
  t.match(await disk1(), /:rw$/, 'the device unlocked Disk 1 read-write')
  t.match(await page.locator('#disks tr').nth(1).textContent(), /unlocked, read-write/, 'and the page shows it')
  await page.getByRole('button', { name: 'Lock Disk 1', exact: true }).click()
  await notice('Disk 1 is locked.')
  t.match(await disk1(), /:-$/, 'and locked it again')
  t.match(await page.locator('#disks tr').nth(1).textContent(), /Disk 1.*\)locked/, 'and the page shows it')

  // A reboot kills every token: the page logs in again with the key it kept, and the new boot's journal file shows.
  t.equal((await api(`${o.base}/api/system/reboot`, o.token)).status, 200, 'rebooted')
  await until(
    'the device is back',
    async () => (await api(`${o.base}/api/logger/list`, await login(o.base, 'logger:get'))).json.total === 2,
  )
  await page.getByRole('button', { name: 'Refresh' }).click()
  await page.locator('#logs li').nth(1).waitFor()
  t.ok(await alert.isHidden(), 'no error after the reboot')

  await page.getByRole('button', { name: 'Log out' }).click()
  await notice('Logged out.')
  t.ok(await page.locator('#audit').isHidden(), 'logged out: no log list')
  t.equal(await page.getByRole('button', { name: 'Lock Disk 0' }).count(), 0, 'nor disk buttons')
  t.same(problems, [], 'no script error and no CSP violation')
})
