// The set-up wizard's restore in Chromium: a fresh device takes a backup of device A, its header's facts shown
// before anything is sent, a wrong passphrase refused in words; then the owner logs in with A's user passphrase and
// the Keys screen lists A's keys. Axe light and dark, no CSP violation.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { openFreshApp } from './helpers/app.js'
import { BACKUP_PASS, downloadBackup, setBackupPassphrase } from './helpers/backup.js'
import { noChromium } from './helpers/browser.js'
import { bothSchemes } from './helpers/keyops.js'
import { login, MASTER_PASS, owned, ownerClient, USER_PASS } from './helpers/owner.js'

t.test('the wizard restores a backup of A, then the owner logs in to A’s keys', { skip: noChromium }, async (t) => {
  // First: its test directory is the test's, made afresh.
  const app = await openFreshApp(t)
  const dir = t.testdirName
  // A admits this page's origin: the restore brings A's configuration, its allowed origin with it.
  const a = await owned(t, { variant: 'P', dataDir: join(dir, 'a'), cfg: { origin: new URL(app.url).origin } })
  const owner = ownerClient(a.https)
  const labels = ['restored signing key', 'restored sealing key']
  await owner.createKey({ label: labels[0]!, type: 'ED25519' })
  await owner.createKey({ label: labels[1]!, type: 'AES256' })
  const master = await login(a.base, 'system:backup', MASTER_PASS)
  t.equal((await setBackupPassphrase(a.https, master)).status, 200)
  const file = join(dir, 'a.hembackup')
  await writeFile(file, (await downloadBackup(a.https, master)).bytes)

  const { page } = app
  const posts: string[] = []
  page.on('request', (request) => void (request.method() === 'POST' && posts.push(new URL(request.url()).pathname)))
  await page.getByRole('button', { name: 'Restore from a backup' }).click()
  await page.getByLabel('Backup file').setInputFiles(join(dir, 'a.hembackup'))
  await page.locator('#restore-facts').waitFor()
  const facts = await page.locator('#restore-facts dd').allTextContents()
  t.equal(facts[0], a.device.devid, 'the source device')
  t.match(facts[1], /\d{4}/, 'when it was made')
  t.equal(facts[2], '2', 'its keys')
  t.same(posts, [], 'nothing sent yet')
  t.same(await bothSchemes(app), [], 'the facts pass axe, light and dark')

  const alert = page.getByRole('alert')
  await page.getByLabel('Backup passphrase').fill(`not ${BACKUP_PASS}`)
  await page.getByRole('button', { name: 'Restore the device' }).click()
  await alert.filter({ hasText: 'wrong' }).waitFor({ timeout: 30_000 })
  t.equal(await alert.textContent(), 'The passphrase is wrong or the file was altered (HTTP 406)')
  t.same(await bothSchemes(app), [], 'the refusal passes axe, light and dark')

  await page.getByLabel('Backup passphrase').fill(BACKUP_PASS)
  await page.getByRole('button', { name: 'Restore the device' }).click()
  const restored = `Restored 2 keys from device ${a.device.devid}: log in with its user passphrase.`
  await page.getByRole('status').filter({ hasText: restored }).waitFor({ timeout: 30_000 })
  t.equal(await page.locator('#setup').count(), 0, 'the wizard is gone')
  t.same(posts.slice(-2), ['/api/system/restore/upload', '/api/system/restore'], 'the upload, then the restore')

  await page.getByLabel('Passphrase', { exact: true }).fill(USER_PASS)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.locator('#screen-title').filter({ hasText: /./ }).or(alert).first().waitFor()
  t.equal((await alert.isVisible()) ? await alert.textContent() : '', '', 'logged in')
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Keys', exact: true }).click()
  for (const label of labels) await page.getByText(label).first().waitFor()
  t.pass("A's keys on the Keys screen")
  t.same(app.problems, [], 'no script error and no CSP violation')
})
