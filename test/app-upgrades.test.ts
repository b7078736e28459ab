// The Upgrades screen in Chromium: a management-app image picked, uploaded with its progress,
// checked, installed, and the new app served after a reload; and every way an image is refused
// (before sending, by the device's check, at install), an upload cut off or cancelled.
import t from 'tap'
import { createHash } from 'node:crypto'
import { mkdir, readFile, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { buildWebroot } from '../deploy/build-webroot.js'
import { openApp, type OpenApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { api } from './helpers/keys.js'
import { imageOf } from './helpers/upload.js'

const NEXT_HEADING = 'HEM management, next build'

/** The app as built now, with another page heading: an image whose install the reload shows. */
async function nextApp(dir: string): Promise<Buffer> {
  await buildWebroot(dir)
  const index = join(dir, 'index.html')
  const html = await readFile(index, 'utf8')
  await writeFile(index, html.replace('<h1>HEM management</h1>', `<h1>${NEXT_HEADING}</h1>`))
  return imageOf(dir, 'ui', 'ui-next', ['P'])
}

/** Beside the device's data dir, in the test's own directory (openApp's t.testdir()). */
const scratch = (app: OpenApp, name: string) => join(app.o.device.dataDir, '..', 'scratch', name)

const tarFile = (buffer: Buffer) => ({ name: 'webroot.tar', mimeType: 'application/x-tar', buffer })

t.test('the app: upload with progress, check, install, reload shows the new app', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const image = await nextApp(scratch(app, 'next'))
  await app.logIn()
  await app.go('Upgrades')
  const version = (await api(`${o.base}/api/system/version`, undefined)).json
  t.equal(
    await page.locator('#versions').textContent(),
    `Hardware${version.hwv}Firmware${version.fwv}Management app image (SHA-256)${version.uis ?? 'none reported'}`,
    'the versions the device reports',
  )
  t.same(await app.violations(), [], 'the screen passes the accessibility check')

  const status = page.getByRole('status')
  const alert = page.getByRole('alert')
  await page.getByLabel('Management app image').setInputFiles(tarFile(image))
  await page.getByText('claims management app ui-next for P, anti-rollback level 0').waitFor()

  await page.getByRole('button', { name: 'Upload app' }).click()
  await status.filter({ hasText: 'Uploaded management app ui-next' }).waitFor()
  const progress = page.getByLabel('Management app upload progress')
  t.same(
    [await progress.getAttribute('value'), await progress.getAttribute('max')],
    [String(image.length), String(image.length)],
    'the progress bar reached its end: every byte',
  )
  t.ok(await page.getByText(`${image.length} of ${image.length} bytes (100 %)`).isVisible(), 'and says so in words')
  t.same(await app.violations(), [], 'uploaded: passes the accessibility check')

  await page.getByRole('button', { name: 'Check app' }).click()
  await status.filter({ hasText: 'The app image is verified' }).waitFor()
  t.ok(await page.getByText('Verified: management app ui-next for P').isVisible(), 'the verdict, in words')

  await page.getByRole('button', { name: 'Install app' }).click()
  const reload = page.getByRole('button', { name: 'Reload the app' })
  await reload.waitFor()
  t.ok(await alert.isHidden(), 'no error on the way')
  const uis = createHash('sha256').update(image).digest('hex')
  t.equal((await api(`${o.base}/api/system/version`, undefined)).json.uis, uis, 'the device runs the new image')
  await page.getByText(uis).waitFor()
  t.pass('and the screen shows its hash')
  t.same(await app.violations(), [], 'installed: passes the accessibility check')

  await reload.click()
  await page.getByRole('heading', { level: 1, name: NEXT_HEADING }).waitFor()
  t.pass('the reload runs the new app')
  await app.logIn()
  await app.go('Upgrades')
  t.ok(await page.getByText(uis).isVisible(), 'which shows its own image')
  t.same(app.problems, [], 'no script error and no CSP violation')
})

t.test(
  'refused images: before sending, by the check, at install; cut off; cancelled',
  { skip: noChromium },
  async (t) => {
    // A browser of its own: playwright hands a file path to a browser it launched, but sends a
    // browser it is connected to (the run's) the file's bytes, 16 MiB of them below.
    const app = await openApp(t, { ownBrowser: true })
    const { page } = app
    const dir = scratch(app, 'x')
    await mkdir(dir)
    await writeFile(join(dir, 'index.html'), '<h1>x</h1>')
    const image = await imageOf(dir, 'ui', 'ui-x', ['P'])
    await app.logIn()
    await app.go('Upgrades')
    const uploads: string[] = []
    page.on('request', (request) => {
      if (request.url().includes('/upload_ui')) uploads.push(request.url())
    })
    const alert = page.getByRole('alert')
    const status = page.getByRole('status')
    const input = page.getByLabel('Management app image')
    const upload = page.getByRole('button', { name: 'Upload app' })
    const refusedBeforeSending = async (file: Buffer | string, text: string, what: string) => {
      await input.setInputFiles(typeof file === 'string' ? file : tarFile(file))
      await page.getByText(text).first().waitFor()
      t.equal(await input.getAttribute('aria-invalid'), 'true', `${what}: the field says so`)
      await upload.click()
      await alert.filter({ hasText: text }).waitFor()
      t.pass(`${what}: refused in words`)
    }
    await refusedBeforeSending(
      Buffer.from('not an image at all, but long enough '.repeat(8)),
      'not a HEM image',
      'text',
    )
    t.same(await app.violations(), [], 'a refused file: passes the accessibility check')
    const firmware = Buffer.from(image)
    firmware[8] = 1
    await refusedBeforeSending(firmware, 'This is a firmware image, not a management app one.', 'the other kind')
    // A path, not bytes: the browser reads the (sparse) file from the disk; the test sends none of it.
    const large = scratch(app, 'large.bin')
    await writeFile(large, '')
    await truncate(large, 16 * 1024 * 1024 + 1)
    await refusedBeforeSending(
      large,
      'An image is at most 16 MiB (16777216 bytes); this file has 16777217 bytes.',
      'too large',
    )
    t.same(uploads, [], 'none of them was sent')

    const check = page.getByRole('button', { name: 'Check app' })
    const install = page.getByRole('button', { name: 'Install app' })
    const forged = Buffer.from(image)
    forged[100]! ^= 1
    await input.setInputFiles(tarFile(forged))
    await upload.click()
    await status.filter({ hasText: 'Uploaded' }).waitFor()
    await check.click()
    await alert.filter({ hasText: /^signature: .* \(HTTP 406\)$/ }).waitFor()
    t.ok(await page.getByText(/^Rejected: signature: /).isVisible(), 'a forged signature: the check says why')
    t.same(await app.violations(), [], 'a rejected image: passes the accessibility check')
    await install.click()
    await alert.filter({ hasText: 'No verified image to install: upload it and check it first (HTTP 406)' }).waitFor()
    t.pass('and the install is refused, in the device words')

    await input.setInputFiles(tarFile(image.subarray(0, image.length - 10)))
    await upload.click()
    await status.filter({ hasText: 'Uploaded' }).waitFor()
    await check.click()
    await alert.filter({ hasText: /\(HTTP 406\)$/ }).waitFor()
    t.match(await alert.textContent(), /^(length|integrity): /, 'a truncated image: rejected by the check')

    // The network drops the upload.
    await page.route('**/api/system/upgrade/upload_ui', (route) => route.abort('connectionreset'))
    await input.setInputFiles(tarFile(image))
    await upload.click()
    await alert.filter({ hasText: 'The upload was cut off' }).waitFor()
    t.pass('an upload cut off, in words')
    await page.unrouteAll()

    // The owner cancels an upload that hangs.
    let held!: () => void
    const hanging = new Promise<void>((resolve) => (held = resolve))
    await page.route('**/api/system/upgrade/upload_ui', async (route) => {
      held()
      await new Promise(() => undefined)
      await route.abort()
    })
    await upload.click()
    await hanging
    await page.getByRole('button', { name: 'Cancel the app upload' }).click()
    await alert.filter({ hasText: 'The upload was cancelled.' }).waitFor()
    t.ok(await page.getByRole('button', { name: 'Cancel the app upload' }).isDisabled(), 'nothing left to cancel')
    await page.unrouteAll({ behavior: 'ignoreErrors' })

    await upload.click()
    await status.filter({ hasText: 'Uploaded' }).waitFor()
    await check.click()
    await status.filter({ hasText: 'The app image is verified' }).waitFor()
    t.pass('a good image after all that goes through')
    t.same(app.problems, [], 'no script error and no CSP violation')
  },
)
