import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Test } from 'tap'
import { chromium, type Page } from 'playwright-core'
import { CHROMIUM, CHROMIUM_FLAGS, sharedChromium } from './shared-chromium.js'

/** Debian's chromium (deploy/setup.sh installs it when it may). */
export { CHROMIUM }

/** A tap `skip` reason when there is no browser to test with, else false. */
export const noChromium: string | false = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is not installed (apt-get install chromium)`

export interface BrowserPage {
  page: Page
  /**
   * What went wrong so far beyond the API's answers (which the page is there to show): uncaught
   * errors, console errors (a CSP violation is one), and files other than /api/ that failed.
   */
  problems: string[]
}

/**
 * A page in a browser context of its own (as fresh as a new browser's), closed when the test ends:
 * in the run's Chromium (helpers/shared-chromium.ts), or in one of its own when none runs or
 * `ownBrowser` asks for it, or `args` (more Chromium flags) need it. Every host name resolves to
 * 127.0.0.1, so that a page can reach a device at its configured hostname.
 */
export async function openPage(t: Test, { ownBrowser = false, args = [] as string[] } = {}): Promise<BrowserPage> {
  // Flags of its own (a fake camera) need a browser of its own.
  const shared = ownBrowser || args.length > 0 ? undefined : sharedChromium()
  const browser = shared
    ? await chromium.connectOverCDP(shared.endpoint)
    : await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_FLAGS, ...args] })
  // For the run's browser, only this test's contexts close and the connection ends.
  t.teardown(() => browser.close())
  // The device's certificate is its own, self-signed: the owner accepted it once.
  const page = await (await browser.newContext({ ignoreHTTPSErrors: true })).newPage()
  page.setDefaultTimeout(20_000)
  const problems: string[] = []
  page.on('pageerror', (error) => problems.push(error.message))
  page.on('console', (message) => {
    // Chromium also logs every 4xx answer so; the responses are judged below.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      problems.push(message.text())
  })
  page.on('response', (response) => {
    if (response.status() >= 400 && !new URL(response.url()).pathname.startsWith('/api/'))
      problems.push(`${response.status()} ${response.url()}`)
  })
  return { page, problems }
}

const AXE_SOURCE = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/**
 * axe-core's WCAG 2.1 A/AA rules on the page as it is now: one line per violation (rule, impact,
 * the first offending element), none when it passes. Run through the debugger protocol, which the
 * page's CSP does not govern.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(await AXE_SOURCE)
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (options: unknown) => Promise<AxeResult> } }).axe
    const result = await axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    })
    return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes[0]?.target.join(' ') ?? ''}`)
  })
}

interface AxeResult {
  violations: { id: string; impact: string; nodes: { target: string[] }[] }[]
}
