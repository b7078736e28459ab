// The docs' screenshots script: one PNG per screen (and a fresh device's set-up wizard, the login
// form, the dashboard and Keys dark, an AES key used, the Authenticators panel while a pairing
// waits, the Backup panel after a backup, another fresh device's wizard with that backup chosen,
// the dashboard and Keys at phone width, and the web authenticator asked for a login at phone
// width), written where it is told.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { noChromium } from './helpers/browser.js'
import { writeScreenshots } from './tools/write-screenshots.js'

// The dashboard at the narrow phone of 375 px; Keys at the 390 px of the review.
const PHONE_WIDTHS: Record<string, number> = {
  'dashboard-phone.png': 375,
  'keys-phone.png': 390,
  'authenticator-phone.png': 375,
}

const PANELS = ['authenticators.png', 'settings-backup.png']

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

t.test('every screen, as a PNG', { skip: noChromium }, async (t) => {
  const out = t.testdir()
  const written = await writeScreenshots(out)
  t.same(
    written.map((path) => basename(path)),
    [
      ...['setup-wizard', 'login', 'dashboard', 'keys', 'audit', 'settings', 'upgrades', 'health'],
      ...['dashboard-dark', 'keys-dark', 'key-use', 'authenticators', 'settings-backup', 'setup-restore'],
      ...['dashboard-phone', 'keys-phone', 'authenticator-phone'],
    ].map((n) => `${n}.png`),
  )
  for (const path of written) {
    const png = await readFile(path)
    t.same(png.subarray(0, 8), PNG_SIGNATURE, `${basename(path)} is a PNG`)
    // IHDR: width then height, big-endian, at bytes 16 and 20.
    const width = png.readUInt32BE(16)
    // The Authenticators and Backup panels are shot alone, as wide as the page's column.
    if (PANELS.includes(basename(path))) t.ok(width > 300 && width < 1200, `${basename(path)}: its width`)
    else t.equal(width, PHONE_WIDTHS[basename(path)] ?? 1200, `${basename(path)}: its width`)
  }
})
