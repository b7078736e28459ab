// The docs' screenshots script: one PNG per screen (and the login form, the dashboard at phone
// width, the Authenticators panel while a pairing waits, and the web authenticator asked for a
// login at phone width), written where it is told.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { noChromium } from './helpers/browser.js'
import { writeScreenshots } from './tools/write-screenshots.js'

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

t.test('every screen, as a PNG', { skip: noChromium }, async (t) => {
  const out = t.testdir()
  const written = await writeScreenshots(out)
  t.same(
    written.map((path) => basename(path)),
    [
      ...['login', 'dashboard', 'keys', 'audit', 'settings', 'upgrades', 'health', 'authenticators'],
      ...['dashboard-phone', 'authenticator-phone'],
    ].map((n) => `${n}.png`),
  )
  for (const path of written) {
    const png = await readFile(path)
    t.same(png.subarray(0, 8), PNG_SIGNATURE, `${basename(path)} is a PNG`)
    // IHDR: width then height, big-endian, at bytes 16 and 20.
    const width = png.readUInt32BE(16)
    // The Authenticators panel is shot alone, as wide as the page's column.
    if (basename(path) === 'authenticators.png') t.ok(width > 300 && width < 1200, 'authenticators.png: its width')
    else t.equal(width, basename(path).endsWith('-phone.png') ? 375 : 1200, `${basename(path)}: its width`)
  }
})
