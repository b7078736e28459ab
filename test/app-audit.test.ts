// The audit log screen in Chromium: the file list, a download byte for byte, the journal verified in
// the browser with the log key, the timeline and its filters, a tampered journal found at its file
// and line, every request under a logger:get token, and a device that stopped answering.
import { readFile } from 'node:fs/promises'
import t from 'tap'
import { sendSimCommand } from '../cli/hemd/sim-cli.js'
import { logTypePhrase } from '../protocol/log-type-names.js'
import { LogType } from '../protocol/journal.js'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { api } from './helpers/keys.js'
import { bearer, login } from './helpers/owner.js'

const LOGGER = 'logger:get'

t.test(
  'list, download, verify, filter the timeline; a tampered journal; an unreachable device',
  { skip: noChromium },
  async (t) => {
    const app = await openApp(t)
    const { o, page } = app
    // A second boot (a second file, linked to the first and ended by its close seal), and a refusal
    // the timeline shows as a failure: a logger:get token asking for the key list.
    await o.device.restart()
    const auditor = await login(o.base, LOGGER)
    t.equal((await api(`${o.https}/api/keymgmt/list`, auditor)).status, 403)

    const loggerTokens = new Set<string>()
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/api/logger/'))
        loggerTokens.add(request.headers().authorization?.replace(/^Bearer /, '') ?? 'none')
    })
    await app.logIn()
    await app.go('Audit log')

    const listed = (await api(`${o.base}/api/logger/list/0`, auditor)).json as { total: number; id: string[] }
    t.ok(listed.id.length >= 2, 'a file per boot')
    const table = page.locator('#log-files tbody tr')
    t.same(await table.locator('th').allTextContents(), listed.id, 'the list is the device’s, oldest first')
    t.match(await page.locator('.files-range').textContent(), `Files 1 to ${listed.id.length} of ${listed.total}`)
    t.ok(await page.getByRole('button', { name: 'Earlier files' }).isDisabled(), 'one page: no paging')
    t.same(await app.violations(), [], 'the file list passes the accessibility check')

    // The first file is closed: its bytes no longer change.
    const closed = listed.id[0]!
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: `Download ${closed}` }).click(),
    ])
    t.equal(download.suggestedFilename(), `${closed}.log`)
    const fromApi = new Uint8Array(
      await (await fetch(`${o.base}/api/logger/${closed}`, { headers: bearer(auditor) })).arrayBuffer(),
    )
    t.same(new Uint8Array(await readFile((await download.path())!)), fromApi, 'the download is the file, byte for byte')
    await page
      .getByRole('status')
      .filter({ hasText: `Downloaded log file ${closed}` })
      .waitFor()

    await page.getByRole('button', { name: 'Verify all files' }).click()
    const verdict = page.locator('#verdict')
    await verdict.waitFor()
    t.match(
      await verdict.textContent(),
      /^Verified: all \d+ files, \d+ records and \d+ seals? check out with the log key/,
    )
    t.notOk(await verdict.evaluate((p) => p.classList.contains('failed')))
    const perFile = await page.locator('#verified-files tbody td').allTextContents()
    t.ok(perFile.length >= 2 && perFile.every((text) => /^verified, \d+ records$/.test(text)), 'every file verified')
    t.match(await page.getByRole('status').textContent(), /^Verification done\. Verified: all/)
    t.same(await app.violations(), [], 'the verified journal and its timeline pass the accessibility check')
    await page.setViewportSize({ width: 360, height: 740 })
    const width = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
          .scrollWidth,
    )
    t.ok(width <= 360, `the results and the timeline fit a 360 px screen (${width})`)
    await page.setViewportSize({ width: 1280, height: 800 })

    const events = page.locator('ol.timeline > li')
    const total = await events.count()
    t.ok(total > 5, 'the timeline tells the journal')
    t.ok(
      (await events.allTextContents()).some((text) => text.includes('master') && text.includes('device personalised')),
      'who and what, in words',
    )

    await page.getByLabel('Result').selectOption('FAILED')
    const failed = await events.allTextContents()
    t.ok(failed.length >= 1 && failed.length < total, 'the result filter narrows the timeline')
    t.ok(
      failed.every((text) => text.includes('FAILED')),
      'each failure says so in words',
    )
    t.equal(await page.locator('ol.timeline > li.failed').count(), failed.length, 'and is marked as a failure')
    t.ok(failed.some((text) => text.includes(logTypePhrase(LogType.FAILED_SCOPE_CHECK)) && text.includes('403')))

    await page.getByLabel('Result').selectOption('')
    await page.getByLabel('Type').selectOption({ label: logTypePhrase(LogType.SHUTDOWN) })
    const shutdowns = await events.allTextContents()
    t.ok(shutdowns.length >= 1 && shutdowns.length < total, 'the type filter narrows the timeline')
    t.ok(shutdowns.every((text) => text.includes(logTypePhrase(LogType.SHUTDOWN))))

    await page.getByLabel('Type').selectOption('')
    await page.getByLabel('Who').selectOption({ label: 'master (M)' })
    const byMaster = await events.allTextContents()
    t.ok(byMaster.length >= 1 && byMaster.length < total, 'the subject filter narrows the timeline')
    t.ok(byMaster.every((text) => text.includes('master')))
    t.same(await app.violations(), [], 'the filtered timeline passes the accessibility check')

    t.ok(loggerTokens.size >= 1 && !loggerTokens.has('none'), 'every logger request carries a token')
    for (const token of loggerTokens) {
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'))
      t.equal(claims.scope, LOGGER, 'a token the app minted for logger:get, and for nothing else')
    }

    await t.test('a journal changed on the device fails, at its file and line', async (t) => {
      const corrupted = await sendSimCommand(o.device.dataDir, { action: 'corrupt-journal' })
      t.equal(corrupted.status, 200)
      const { file, line } = corrupted.body as { file: string; line: number }
      // At the next boot the device finds the file broken: it leaves it unsealed, and the next file's
      // LINK vouches only for the records before the change.
      await o.device.restart()
      // The restart ended the session, as every restart does.
      await page.getByText('The device restarted, so every login ended').first().waitFor()
      await app.logIn()
      await app.go('Audit log')
      await page.getByRole('button', { name: 'Verify all files' }).click()
      await page.locator('#verdict.failed').waitFor()
      const words = `file ${file}, line ${line + 1}`
      t.match(await verdict.textContent(), `The first: ${words} (record `)
      t.match(await verdict.textContent(), /^FAILED: \d+ problems in 2 files of \d+\./)
      t.match(await verdict.textContent(), /: MAC does not match\.$/)
      const row = page.locator('#verified-files tbody tr').filter({ has: page.locator('th', { hasText: file }) })
      t.match(await row.locator('td').textContent(), `FAILED: ${words}`)
      t.ok(await row.locator('td.failed strong').isVisible(), 'the failed file is marked, in words')
      t.match(
        await page.getByText('The timeline leaves out the records of the 2 files that did not verify.').count(),
        1,
      )
      t.same(await app.violations(), [], 'the failed verification passes the accessibility check')
    })

    await t.test('a device that stopped answering: a clear alert', async (t) => {
      await o.device.stop()
      await page.getByRole('button', { name: 'Verify all files' }).click()
      const alert = page.getByRole('alert')
      await alert.waitFor()
      t.equal(await alert.textContent(), 'The device did not answer. Is it still running and reachable?')
      await page.getByRole('button', { name: `Download ${closed}` }).click()
      await page.getByRole('alert').filter({ hasText: 'The device did not answer' }).waitFor()
    })

    t.same(app.problems, [], 'no script error and no CSP violation')
  },
)
