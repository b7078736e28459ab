// Screenshots of the management app's screens for the docs: the set-up wizard of a fresh P device,
// then an owned P device with a few keys, the app in headless Chromium, one PNG per screen at desktop
// width, an AES key's "Use this key" after an encrypt, the dashboard and Keys in the dark palette and
// at phone width, Settings → Authenticators while a pairing waits (the built hem-cloud, test mode, as
// the device's cloud), Settings → Backup once a backup is made, the wizard of another fresh device with
// that backup chosen for a restore, and the web authenticator that cloud serves, paired and asked for a
// login, at phone width. `npm run screenshots [-- OUT]`, default docs/screenshots/.
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Page } from 'playwright-core'
import type { Test } from 'tap'
import { openApp, openFreshApp, type OpenApp } from '../helpers/app.js'
import { openPage } from '../helpers/browser.js'
import { repoRoot } from '../helpers/device.js'
import { BACKUP_PASS } from '../helpers/backup.js'
import { cloudProcess } from '../helpers/ext-e2e.js'
import { b64, createKey, Tokens } from '../helpers/keys.js'
import { done, keyopsPage } from '../helpers/keyops.js'
import { MASTER_PASS } from '../helpers/owner.js'
import { scriptTest } from '../helpers/script-test.js'

const SAMPLE_KEYS = [
  { label: 'payments', type: 'AES256', descr: 'card data at rest' },
  { label: 'signing', type: 'ED25519', descr: 'release signatures' },
  { label: 'tls-client', type: 'SECP256R1', descr: 'mutual TLS to the backend' },
]

/**
 * What a screen shows once used: a few temperature readings (the chart starts afresh on every visit),
 * the audit log verified, the self-test run.
 */
const FIRST_ACTIONS: Record<string, (page: Page) => Promise<void>> = {
  dashboard: (page) => page.getByText(/over the last 4 readings/).waitFor({ timeout: 60_000 }),
  audit: async (page) => {
    await page.getByRole('button', { name: 'Verify all files' }).click()
    await page.locator('#verdict').waitFor()
  },
  health: async (page) => {
    await page.getByRole('button', { name: 'Run the self-test' }).click()
    await page.getByRole('status').filter({ hasText: 'The self-test passed.' }).waitFor()
  },
}

export async function writeScreenshots(outDir: string): Promise<string[]> {
  const scratch = await mkdtemp(join(tmpdir(), 'hem-screenshots-'))
  const teardowns: (() => unknown)[] = []
  const written: string[] = []
  try {
    await mkdir(outDir, { recursive: true })
    const shootPage = async (page: Page, name: string) => {
      const path = join(outDir, `${name}.png`)
      await page.screenshot({ path, fullPage: true })
      written.push(path)
    }
    await freshWizard(join(scratch, 'fresh'), firstStep, (page) => shootPage(page, 'setup-wizard'))
    const dataDir = join(scratch, 'data')
    const test = scriptTest(scratch, teardowns)
    const cloud = await cloudProcess(test)
    const app = await openApp(test, { dataDir, boot: { appCloud: cloud.url } })
    const tokens = new Tokens(app.o.base)
    const kids: string[] = []
    for (const key of SAMPLE_KEYS)
      kids.push(
        await createKey(app.o.https, await tokens.get('keymgmt:gen'), { ...key, descr: b64(Buffer.from(key.descr)) }),
      )
    const shoot = (name: string) => shootPage(app.page, name)
    await app.page.setViewportSize({ width: 1200, height: 800 })
    await shoot('login')
    await app.logIn()
    const [first, ...rest] = await app.screens()
    for (const screen of [first!, ...rest]) {
      await app.go(screen.title)
      await FIRST_ACTIONS[screen.path]?.(app.page)
      await shoot(screen.path)
    }
    await app.page.emulateMedia({ colorScheme: 'dark' })
    for (const screen of [first!, rest.find((s) => s.path === 'keys')!]) {
      await app.go(screen.title)
      await FIRST_ACTIONS[screen.path]?.(app.page)
      await shoot(`${screen.path}-dark`)
    }
    await app.page.emulateMedia({ colorScheme: 'light' })
    await app.go('Keys')
    const keyops = keyopsPage(app)
    await keyops.open(kids[0]!)
    const encrypt = await keyops.operation('Encrypt')
    await encrypt.getByLabel('Message', { exact: true }).fill('4111 1111 1111 1111')
    await encrypt.getByLabel('Associated data', { exact: true }).fill('order 1042')
    await encrypt.getByRole('button', { name: 'Encrypt' }).click()
    await done(app.page, /^Encrypted 19 bytes/)
    await shoot('key-use')
    await app.go('Settings')
    const authenticators = app.page.getByRole('region', { name: 'Authenticators' })
    await authenticators.getByRole('button', { name: 'Pair a phone' }).click()
    await authenticators.getByRole('img', { name: /QR code/ }).waitFor()
    const path = join(outDir, 'authenticators.png')
    await authenticators.screenshot({ path })
    written.push(path)
    await authenticators.getByRole('button', { name: 'Cancel the pairing' }).click()
    await app.page.getByRole('status').filter({ hasText: 'Pairing cancelled' }).waitFor()
    written.push(join(outDir, 'settings-backup.png'))
    const backupFile = await backupPanel(app, scratch, written.at(-1)!)
    const restoring = (page: Page) => restoreChosen(page, backupFile)
    await freshWizard(join(scratch, 'fresh-restore'), restoring, (page) => shootPage(page, 'setup-restore'))
    await app.page.setViewportSize({ width: 375, height: 740 })
    await app.go(first!.title)
    await FIRST_ACTIONS[first!.path]?.(app.page)
    await shoot(`${first!.path}-phone`)
    await app.page.setViewportSize({ width: 390, height: 844 })
    await app.go('Keys')
    await shoot('keys-phone')
    written.push(await phonePage(test, app, cloud.url, join(outDir, 'authenticator-phone.png')))
    return written
  } finally {
    for (const fn of teardowns.reverse()) await fn()
    await rm(scratch, { recursive: true, force: true })
  }
}

/** The wizard's first step: the device, its attestation's verdict, the TLS fingerprint. */
async function firstStep(page: Page): Promise<void> {
  await page.locator('#setup-attestation').waitFor()
  await page.locator('#setup-fingerprint').filter({ hasText: /./ }).waitFor()
}

/** The wizard's "Restore from a backup" with `file` chosen: the header's facts shown, nothing sent yet. */
async function restoreChosen(page: Page, file: string): Promise<void> {
  await page.getByRole('button', { name: 'Restore from a backup' }).click()
  await page.getByLabel('Backup file').setInputFiles(file)
  await page.locator('#restore-facts').waitFor()
}

/** A fresh P device's set-up wizard (its data in `dir`) brought to a step by `reach`, shot, and stopped. */
async function freshWizard(
  dir: string,
  reach: (page: Page) => Promise<void>,
  shoot: (page: Page) => Promise<void>,
): Promise<void> {
  const teardowns: (() => unknown)[] = []
  try {
    const { page } = await openFreshApp(scriptTest(dir, teardowns))
    await page.setViewportSize({ width: 1200, height: 800 })
    await reach(page)
    await shoot(page)
  } finally {
    for (const fn of teardowns.reverse()) await fn()
  }
}

/**
 * Settings -> Backup after the owner set the backup passphrase and made a backup there (the master passphrase typed
 * for each): the panel alone, written to `path`. Returns the backup, saved in `dir` under the device's name for it.
 */
async function backupPanel(app: OpenApp, dir: string, path: string): Promise<string> {
  const form = app.page.getByRole('form', { name: 'Backup', exact: true })
  const master = form.getByLabel('Master passphrase')
  await master.fill(MASTER_PASS)
  await form.getByLabel('New backup passphrase').fill(BACKUP_PASS)
  await form.getByLabel('Repeat the backup passphrase').fill(BACKUP_PASS)
  await form.getByRole('button', { name: 'Set the backup passphrase' }).click()
  await app.page.getByRole('status').filter({ hasText: 'The backup passphrase is set.' }).waitFor()
  await master.fill(MASTER_PASS)
  await form.getByRole('button', { name: 'Download a backup' }).click()
  const link = form.locator('#backup-file a')
  const [download] = await Promise.all([app.page.waitForEvent('download'), link.click()])
  const file = join(dir, download.suggestedFilename())
  await download.saveAs(file)
  await form.screenshot({ path })
  return file
}

/** The web authenticator paired by pasting the app's link, shot at phone width while it shows a login request. */
async function phonePage(test: Test, app: OpenApp, cloudUrl: string, path: string): Promise<string> {
  await app.go('Settings')
  const authenticators = app.page.getByRole('region', { name: 'Authenticators' })
  await authenticators.getByRole('button', { name: 'Pair a phone' }).click()
  const link = await authenticators.getByLabel('Pairing link').inputValue()
  const { page: phone } = await openPage(test)
  await phone.setViewportSize({ width: 375, height: 740 })
  await phone.goto(`${cloudUrl}/authenticator/`)
  await phone.getByLabel("Or paste the pairing link or the QR code's text").fill(link)
  await phone.getByRole('button', { name: 'Read the invitation' }).click()
  await phone
    .getByRole('article', { name: /^Pair with/ })
    .getByRole('button', { name: 'Accept' })
    .click()
  await app.page
    .getByRole('status')
    .filter({ hasText: /^Paired/ })
    .waitFor()
  await app.page.getByRole('button', { name: 'Log out' }).click()
  await app.page.reload()
  await app.page.getByRole('button', { name: 'Approve on my phone' }).click()
  const request = phone.getByRole('article', { name: /asks for your approval$/ })
  await request.waitFor()
  await phone.screenshot({ path, fullPage: true })
  await request.getByRole('button', { name: 'Deny' }).click()
  await app.page
    .getByRole('alert')
    .filter({ hasText: /^Denied/ })
    .waitFor()
  return path
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const out = resolve(process.argv[2] ?? join(repoRoot, 'docs', 'screenshots'))
  for (const path of await writeScreenshots(out)) console.log(`wrote ${path}`)
}
