import type { Test } from 'tap'
import { createHash } from 'node:crypto'
import { cp, readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { buildWebroot, WEBROOT_OUT } from '../../deploy/build-webroot.js'
import type { Device } from '../../runtime/types.js'
import { bootDevice, repoRoot } from './device.js'
import { SimWebrootStore } from '../../hal/sim/webroot-store.js'
import { accessibilityViolations, openPage } from './browser.js'
import { owned, USER_PASS, type Owned, type OwnedOptions } from './owner.js'

/** The hostname the test owner's configuration gives (helpers/owner.ts): the app's own origin. */
export const APP_HOST = 'hem.example'

export interface OpenApp {
  o: Owned
  page: Page
  /** Script errors and CSP violations so far (see helpers/browser.ts); a passing test ends with none. */
  problems: string[]
  /** The app's URL over HTTPS at the device's hostname. */
  url: string
  /** Logs in through the login form; resolves once the first screen shows. */
  logIn(passphrase?: string): Promise<void>
  /** Follows the navigation link to a screen, by its title; resolves once its heading shows. */
  go(title: string): Promise<void>
  /** The screens the navigation offers, in its order (after login): title and path (`#/<path>`). */
  screens(): Promise<{ title: string; path: string }[]>
  /** axe-core's WCAG A/AA violations on the page now. */
  violations(): Promise<string[]>
}

/**
 * The app as `npm test`'s set-up built it (dist-webroot/), unless a file of webroot/ changed since:
 * then built afresh into `scratch`. (The client and protocol code it bundles are checked by the test
 * loader, which refuses a dist/ older than its sources.)
 */
async function builtApp(scratch: string): Promise<string> {
  const built = await stat(join(WEBROOT_OUT, 'app.js')).catch(() => undefined)
  const sources = await readdir(join(repoRoot, 'webroot'), { recursive: true, withFileTypes: true })
  const times = await Promise.all(
    sources.filter((e) => e.isFile()).map(async (e) => (await stat(join(e.parentPath ?? e.path, e.name))).mtimeMs),
  )
  if (built && times.every((mtime) => mtime <= built.mtimeMs)) return WEBROOT_OUT
  const fresh = join(scratch, 'webroot-built')
  await buildWebroot(fresh)
  return fresh
}

/** Installs the app as the device's current app, as install_ui would leave it. */
export async function installApp(dataDir: string, scratch: string): Promise<void> {
  const built = await builtApp(scratch)
  // Of every file, as an image's hash covers them all: the gateway keeps an app's files by it (gateway/app-files.ts).
  const hash = createHash('sha256')
  const files = (await readdir(built, { recursive: true, withFileTypes: true })).filter((e) => e.isFile())
  for (const path of files.map((e) => join(e.parentPath, e.name)).sort())
    hash.update(`${path.slice(built.length)}\0`).update(await readFile(path))
  const sha256 = hash.digest('hex')
  await new SimWebrootStore(join(dataDir, 'webroot')).install((dir) => cp(built, dir, { recursive: true }), sha256)
}

/**
 * An owned device (P unless asked) with the app installed, and a fresh Chromium page on the app
 * over HTTPS at the device's hostname, not yet logged in.
 */
export async function openApp(t: Test, options: OwnedOptions & { ownBrowser?: boolean } = {}): Promise<OpenApp> {
  const root = t.testdir({ data: {}, scratch: {} })
  const dataDir = options.dataDir ?? join(root, 'data')
  const o = await owned(t, { variant: 'P', ...options, dataDir })
  await installApp(dataDir, join(root, 'scratch'))
  const { page, problems } = await openPage(t, { ownBrowser: options.ownBrowser ?? false })
  const url = `${o.https.replace('127.0.0.1', APP_HOST)}/`
  await page.goto(url)
  return {
    o,
    page,
    problems,
    url,
    async logIn(passphrase = USER_PASS) {
      await page.getByLabel('Passphrase').fill(passphrase)
      await page.getByRole('button', { name: 'Log in' }).click()
      await page.locator('#screen-title').filter({ hasText: /./ }).waitFor()
      await page.locator('#view:not([aria-busy])').waitFor()
    },
    async go(title) {
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: title, exact: true }).click()
      await page.locator('#screen-title', { hasText: title }).waitFor()
      await page.locator('#view:not([aria-busy])').waitFor()
    },
    screens: () =>
      page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('link')
        .evaluateAll((links) =>
          links.map((link) => ({
            title: link.textContent ?? '',
            path: (link.getAttribute('href') ?? '').replace(/^#\//, ''),
          })),
        ),
    violations: () => accessibilityViolations(page),
  }
}

/** The factory hostname a fresh device answers to (machines/config.ts): where its owner opens the app first. */
export const FRESH_HOST = 'hem.local'

export interface FreshApp {
  device: Device
  page: Page
  /** Script errors and CSP violations so far; a passing test ends with none. */
  problems: string[]
  /** The app's URL over HTTPS at the factory hostname. */
  url: string
  violations(): Promise<string[]>
}

/**
 * A fresh P device (not personalised) with the app installed, and a Chromium page on the app over HTTPS at the
 * factory hostname, as its new owner opens it; `beforeOpen` runs on the device first (a provisioning).
 */
export async function openFreshApp(
  t: Test,
  { beforeOpen }: { beforeOpen?: (device: Device) => Promise<void> } = {},
): Promise<FreshApp> {
  const root = t.testdir({ data: {}, scratch: {} })
  const dataDir = join(root, 'data')
  // Installed before the boot, so that the device names it (version `uis`) as it would its factory app.
  await installApp(dataDir, join(root, 'scratch'))
  const device = await bootDevice(t, { dataDir, variant: 'P' })
  await beforeOpen?.(device)
  const { page, problems } = await openPage(t)
  const url = `${device.httpsUrl!.replace('127.0.0.1', FRESH_HOST)}/`
  await page.goto(url)
  return { device, page, problems, url, violations: () => accessibilityViolations(page) }
}
