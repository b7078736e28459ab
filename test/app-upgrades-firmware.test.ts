// The Upgrades screen in Chromium, firmware: an older build uploaded and checked, its install
// refused until the owner allows the downgrade, then installed and the restart followed until
// the device answers again. In process there is no launcher: the device restarts in place and
// the new slot waits for the next start of hemd, which the screen says.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { LogResult, LogType } from '../protocol/journal.js'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { readJournal } from './helpers/journal.js'
import { api } from './helpers/keys.js'
import { firmwareImage } from './helpers/upload.js'

t.test(
  'firmware: upload, check, a downgrade allowed, install, the restart followed',
  { skip: noChromium },
  async (t) => {
    const app = await openApp(t)
    const { page, o } = app
    const data = o.device.dataDir
    const file = join(data, '..', 'scratch', 'firmware.bin')
    t.equal(await firmwareImage(file, '0.0.0-older', '--hardware', 'P'), 0, 'an older build, signed')
    const image = await readFile(file)
    const running = (await api(`${o.base}/api/system/version`, undefined)).json.fwv as string
    await app.logIn()
    await app.go('Upgrades')
    const status = page.getByRole('status')
    const alert = page.getByRole('alert')

    await page.getByLabel('Firmware image').setInputFiles(file)
    await page.getByText('claims firmware 0.0.0-older for P, anti-rollback level 0').waitFor()
    await page.getByRole('button', { name: 'Upload firmware' }).click()
    await status.filter({ hasText: 'Uploaded firmware 0.0.0-older' }).waitFor()
    const progress = page.getByLabel('Firmware upload progress')
    t.same(
      [await progress.getAttribute('value'), await progress.getAttribute('max')],
      [String(image.length), String(image.length)],
      'the progress bar reached its end',
    )
    await page.getByRole('button', { name: 'Check firmware' }).click()
    await status.filter({ hasText: 'The firmware image is verified' }).waitFor()
    t.same(await app.violations(), [], 'verified: passes the accessibility check')

    const install = page.getByRole('button', { name: 'Install firmware' })
    await install.click()
    await alert.filter({ hasText: '(HTTP 406)' }).waitFor()
    t.match(
      await alert.textContent(),
      `0.0.0-older goes back from the running ${running}`,
      'a downgrade is refused until the owner allows it, in the device words',
    )
    t.same(await app.violations(), [], 'refused: passes the accessibility check')

    await page.getByLabel('Allow a downgrade').check()
    await install.click()
    await status.filter({ hasText: 'The device is back' }).waitFor({ timeout: 120_000 })
    t.equal(
      await status.textContent(),
      `The device is back, running firmware ${running}, not the installed 0.0.0-older: a firmware that fails ` +
        'its trial boot is rolled back (the audit log says why), and a device without its launcher boots it at ' +
        'its next start.',
      'the restart followed to its end',
    )
    t.ok(await alert.isHidden(), 'no error')
    t.equal((await readJournal(data)).files.length, 2, 'a new boot, with its own journal file')
    t.match(JSON.parse(await readFile(join(data, 'boot', 'slots.json'), 'utf8')), {
      trial: { version: '0.0.0-older' },
    })
    t.ok(
      (await readJournal(data)).records.some(
        (r) => r.type === LogType.UPGRADE && r.result === LogResult.OK && r.decoded?.downgrade === true,
      ),
      'the install, journaled as the downgrade the owner allowed',
    )
    t.same(await app.violations(), [], 'back: passes the accessibility check')
    t.same(app.problems, [], 'no script error and no CSP violation')
  },
)
