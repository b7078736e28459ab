// The web authenticator: a phone's browser approves or denies logins to a HEM, paired with it through the broker
// that serves this page (ext-auth contract §4). Its keys are WebCrypto's, kept in this browser's IndexedDB.
import { ApprovalsView } from './approvals-view.js'
import { byId } from './dom.js'
import { Feedback } from './feedback.js'
import { setUpPairing } from './pair-view.js'
import { PairingsView } from './pairings-view.js'
import { openPageAuthenticator } from './web-authenticator.js'

const feedback = new Feedback(byId('notice'), byId('error'))

async function main(): Promise<void> {
  const auth = await openPageAuthenticator()
  const pairings = new PairingsView(auth, feedback)
  await pairings.show()
  setUpPairing(auth, feedback, { paired: () => pairings.show() })
  new ApprovalsView(auth, feedback, () => pairings.refresh()).start()
}

main().catch((error: unknown) => feedback.fail(error))
