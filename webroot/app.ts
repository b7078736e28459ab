// The management app's shell: log in once with the passphrase (or by a paired phone's approval),
// then one screen at a time (`#/<path>`), each doing its work through the device API under its own
// narrow scopes.
import { offerApproval } from './approval-login.js'
import { byId, h } from './dom.js'
import { DeviceSession, deviceRequest } from './device-session.js'
import { describeFailState } from './fail-state.js'
import { Feedback } from './feedback.js'
import type { AppContext, DeviceStatus, View } from './view.js'
import { unixTimeWords } from './views/time-words.js'
import { VIEWS } from './views/views.js'

/** What login checks the passphrase with: the narrowest scope the first screen (status extras) needs. */
const LOGIN_SCOPE = 'system:config'

const ui = {
  deviceLine: byId<HTMLParagraphElement>('device-line'),
  nav: byId<HTMLElement>('nav'),
  sessionLine: byId<HTMLParagraphElement>('session'),
  who: byId<HTMLSpanElement>('who'),
  logout: byId<HTMLButtonElement>('logout'),
  banner: byId<HTMLParagraphElement>('fail-banner'),
  login: byId<HTMLElement>('login'),
  loginForm: byId<HTMLFormElement>('login-form'),
  passphrase: byId<HTMLInputElement>('passphrase'),
  remoteLogin: byId<HTMLDivElement>('remote-login'),
  screen: byId<HTMLElement>('screen'),
  screenTitle: byId<HTMLHeadingElement>('screen-title'),
  view: byId<HTMLDivElement>('view'),
}

const feedback = new Feedback(byId('notice'), byId('error'))
let context: AppContext | undefined
let leaveScreen: (() => void) | void = undefined
let shown = 0

async function readStatus(): Promise<DeviceStatus> {
  const status = (await deviceRequest('/api/system/status')) as DeviceStatus
  showDeviceLine(status)
  return status
}

function showDeviceLine(status: DeviceStatus): void {
  ui.deviceLine.textContent = status.inited === false ? 'This device has no owner yet: set it up below.' : ''
  ui.banner.hidden = status.fls_state === 0
  ui.banner.textContent =
    status.fls_state === 0 ? '' : `The device is in the fail state: ${describeFailState(status.fls_state)}.`
}

function viewFor(hash: string): View {
  const path = hash.replace(/^#\//, '')
  return VIEWS.find((view) => view.path === path) ?? VIEWS[0]!
}

/** Shows the screen the URL names; a later navigation while it loads wins. */
async function showScreen(): Promise<void> {
  if (!context) return
  const view = viewFor(location.hash)
  const turn = ++shown
  leaveScreen?.()
  leaveScreen = undefined
  for (const link of ui.nav.querySelectorAll('a'))
    if (link.getAttribute('href') === `#/${view.path}`) link.setAttribute('aria-current', 'page')
    else link.removeAttribute('aria-current')
  ui.screenTitle.textContent = view.title
  document.title = `${view.title} · HEM management`
  const root = h('div')
  ui.view.replaceChildren(root)
  feedback.clearError()
  ui.view.setAttribute('aria-busy', 'true')
  feedback.progress(`Loading ${view.title.toLowerCase()}…`)
  try {
    const leave = await view.show(root, context)
    if (turn === shown) {
      leaveScreen = leave
      feedback.progress('')
    } else leave?.()
  } catch (error) {
    if (turn === shown) {
      feedback.progress('')
      feedback.fail(error)
    }
  } finally {
    if (turn === shown) ui.view.removeAttribute('aria-busy')
  }
}

function showSession(session: DeviceSession | undefined): void {
  ui.login.hidden = session !== undefined
  ui.screen.hidden = session === undefined
  ui.nav.hidden = session === undefined
  ui.sessionLine.hidden = session === undefined
  ui.who.textContent = session ? whoWords(session) : ''
}

/** Who the session is, honestly: an approved one is the authenticator's, of one scope, until its expiry. */
function whoWords(session: DeviceSession): string {
  const { approved } = session
  if (!approved) return `Logged in as ${session.user}.`
  return (
    `Logged in by approval on a phone (authenticator ${approved.kid}): role ExtAuth, scope ${approved.scope}, ` +
    `until ${unixTimeWords(approved.exp)}.`
  )
}

function startSession(session: DeviceSession): void {
  context = { session, feedback, secure: location.protocol === 'https:', status: readStatus, logOut }
  showSession(session)
}

function logOut(message: string): void {
  leaveScreen?.()
  leaveScreen = undefined
  context = undefined
  ui.view.replaceChildren()
  showSession(undefined)
  feedback.progress(message)
  ui.passphrase.focus()
  void offerApproval(ui.remoteLogin, feedback, approvedLogin)
  void readStatus().then(offerSetup, () => undefined)
}

/** A device with no owner (fresh, or after a wipeout) gets the set-up wizard, loaded now: it runs once in its life. */
async function offerSetup(status: DeviceStatus): Promise<void> {
  if (status.inited !== false) return
  const { openSetupWizard } = await import('./setup/setup-wizard.js')
  await openSetupWizard({ login: ui.login, feedback, scope: LOGIN_SCOPE, loggedIn: approvedLogin })
}

function approvedLogin(session: DeviceSession): void {
  startSession(session)
  void showScreen().then(() => ui.screenTitle.focus())
}

ui.nav.append(h('ul', {}, ...VIEWS.map((view) => h('li', {}, h('a', { href: `#/${view.path}` }, view.title)))))

ui.loginForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void feedback
    .run('Logging in (deriving the key takes a moment)…', async () => {
      // Out of the page at once: the derived key is all the session keeps.
      const passphrase = ui.passphrase.value
      ui.passphrase.value = ''
      startSession(await DeviceSession.open(passphrase, LOGIN_SCOPE))
    })
    .then((ok) => {
      if (!ok) return
      void showScreen().then(() => ui.screenTitle.focus())
    })
})

ui.logout.addEventListener('click', () => logOut('Logged out.'))

addEventListener('hashchange', () => {
  void showScreen().then(() => ui.screenTitle.focus())
})

void feedback
  .run('Reading the device…', async () => {
    await offerSetup(await readStatus())
  })
  .then(() => offerApproval(ui.remoteLogin, feedback, approvedLogin))
