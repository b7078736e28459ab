// Settings -> Backup in Chromium, from a user's session: the master passphrase asked for each action, the backup
// passphrase set (checked before sending), a backup downloaded whose header names the device; axe light and dark.
import { readFile } from 'node:fs/promises'
import t from 'tap'
import { readBackupHeader } from '../protocol/index.js'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { bothSchemes } from './helpers/keyops.js'
import { MASTER_PASS } from './helpers/owner.js'

const BACKUP_PASS = 'a backup passphrase from the app'

t.test('settings: set the backup passphrase and download a backup', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  await app.logIn()
  await app.go('Settings')
  const master = page.getByLabel('Master passphrase')
  const next = page.getByLabel('New backup passphrase')
  const repeat = page.getByLabel('Repeat the backup passphrase')
  const set = page.getByRole('button', { name: 'Set the backup passphrase' })
  const make = page.getByRole('button', { name: 'Download a backup' })
  const alert = page.getByRole('alert')
  const status = page.getByRole('status')

  await next.fill('too short')
  await repeat.fill('too shorter')
  await set.click()
  await alert.filter({ hasText: 'Nothing was sent' }).waitFor()
  t.equal(await master.getAttribute('aria-invalid'), 'true', 'the master passphrase is asked for')
  t.ok(await page.getByText('A backup passphrase has at least 12 bytes (this one has 9)').isVisible())
  t.ok(await page.getByText('The two backup passphrases differ.').isVisible())
  t.match(
    await page.locator('#view .strength').first().textContent(),
    /^ Strength: .+ \(about \d+ bits\)\.$/,
    "the wizard's meter",
  )
  t.same(await bothSchemes(app), [], 'the marked panel passes axe, light and dark')

  await make.click()
  await alert.filter({ hasText: 'Nothing was sent' }).waitFor()
  await master.fill(MASTER_PASS)
  await make.click()
  await alert.filter({ hasText: 'Set a backup passphrase first' }).waitFor()
  t.match(await alert.textContent(), /^Set a backup passphrase first \(HTTP 409\)$/, 'the refusal in words')
  t.equal(await master.inputValue(), '', 'the master passphrase is not kept in the field')

  await master.fill('not the master passphrase')
  await next.fill(BACKUP_PASS)
  await repeat.fill(BACKUP_PASS)
  await set.click()
  await alert.filter({ hasText: 'Login refused' }).waitFor()
  await master.fill(MASTER_PASS)
  await next.fill(BACKUP_PASS)
  await repeat.fill(BACKUP_PASS)
  await set.click()
  await status.filter({ hasText: 'The backup passphrase is set.' }).waitFor()

  await master.fill(MASTER_PASS)
  await make.click()
  const link = page.locator('#backup-file a')
  await link.waitFor()
  t.match(await link.textContent(), new RegExp(`^Save hem-${o.device.devid}-\\d+\\.hembackup \\(\\d+ bytes\\)$`))
  t.match(await page.locator('#view progress').last().getAttribute('value'), /^[1-9]\d*$/, 'the progress moved')
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()])
  const bytes = new Uint8Array(await readFile((await download.path())!))
  t.equal(download.suggestedFilename(), (await link.getAttribute('download'))!, "the device's name for it")
  t.same([readBackupHeader(bytes).devid, readBackupHeader(bytes).keys], [o.device.devid, 0], 'the header names A')
  t.same(await bothSchemes(app), [], 'after the download: axe, light and dark')
  t.equal(await app.page.locator('#who').textContent(), 'Logged in as Ada (user passphrase).', 'still the user')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
