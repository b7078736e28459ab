// The broker goes away while the page polls: the page says so in words (after the core's retries) and keeps
// polling; once the broker is back the note goes and requests arrive again. Nothing is lost of the pairing.
import t from 'tap'
import { openAuthapp, pairByPasting, violationsInBothModes } from './helpers/authapp.js'
import { noChromium } from './helpers/browser.js'

t.test('a broker that stops answering, then comes back', { skip: noChromium }, async (t) => {
  const app = await openAuthapp(t)
  const { page, cloud, owner } = app
  await pairByPasting(app)

  await cloud.cloud.stop()
  const alert = page.getByRole('alert')
  await alert.filter({ hasText: 'The broker did not answer. Check the network connection and try again.' }).waitFor()
  t.same(await violationsInBothModes(page), [], 'the alert passes axe, light and dark')

  await cloud.restart()
  await alert.waitFor({ state: 'hidden' })
  const asked = await owner.askApproval('system:config')
  const card = page.getByRole('article', { name: 'hem.example asks for your approval' })
  await card.waitFor()
  await card.getByRole('button', { name: 'Allow' }).click()
  t.match(await asked.outcome(), { state: 'allowed' }, 'answered through the broker back again')
  // A broker coming back answers 503 `unavailable` (Retry-After) until its buckets are ready: the page retries it.
  const retried = (problem: string) => problem.startsWith(`503 ${cloud.cloud.url}/notify/`)
  t.same(
    app.problems.filter((problem) => !retried(problem)),
    [],
    'no script error, no CSP violation',
  )
})
