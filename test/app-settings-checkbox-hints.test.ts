// Every checkbox on the Settings screen, in Chromium, carries a one-line hint of what turning it on
// does, linked to it (aria-describedby) so that a screen reader reads it with the label: the
// configuration's switches, and the reformat tick when a new Disk 0 size asks for it; light and dark.
import t from 'tap'
import type { Page } from 'playwright-core'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'

/** Each visible checkbox's label and the text of what describes it (its hints, not its errors). */
const checkboxes = (page: Page) =>
  page.locator('#view input[type="checkbox"]:visible').evaluateAll((boxes) =>
    boxes.map((box) => {
      const doc = (globalThis as any).document
      const ids = (box.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean)
      const hints = ids.map((id: string) => doc.getElementById(id)).filter((el: any) => el?.classList.contains('hint'))
      return {
        label: doc.querySelector(`label[for="${box.id}"]`)?.textContent ?? '',
        hint: hints.map((el: any) => el.textContent).join(' '),
        shown: hints.every((el: any) => el.checkVisibility()),
      }
    }),
  )

t.test('settings: each checkbox with its hint', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page } = app
  await app.logIn()
  await app.go('Settings')
  const shown = await checkboxes(page)
  t.ok(shown.length >= 5, `${shown.length} checkboxes`)
  for (const { label, hint, shown: visible } of shown) {
    t.match(hint, /^[^\n]{10,}\.$/, `${label}: ${hint}`)
    t.ok(visible, `${label}: the hint is on the screen`)
  }
  t.same(await app.violations(), [], 'the hints pass the accessibility check')

  await page.getByLabel('Disk 0 size (512-byte sectors)').fill('1000')
  const reformat = page.getByLabel('Reformat both disks: erase everything on them')
  await reformat.waitFor()
  const withReformat = await checkboxes(page)
  t.equal(withReformat.length, shown.length + 1, 'a new size asks for the reformat tick')
  t.match(
    withReformat.find((box) => box.label.startsWith('Reformat'))?.hint,
    /^On: .* formatted anew; whatever they hold is lost\.$/,
    'the reformat tick says what it does',
  )
  t.same(await app.violations(), [], 'with the reformat tick')
  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'dark: with the reformat tick')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
