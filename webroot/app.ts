// The management app's shell: log in once with the passphrase (or by a paired phone's approval),
// then one screen at a time (`#/<path>`), each doing its work through the device API under its own
// narrow scopes. One watch of the device keeps every screen honest: the device silent, its fail
// state, a new boot (which ends the session); and a session left idle ends too.
import { offerApproval } from './approval-login.js'
import { byId, h } from './dom.js'
import { DeviceSession, RESTARTED_MESSAGE } from './device-session.js'
import { DeviceWatch } from './device-watch.js'
import { describeFailState } from './fail-state.js'
import { Feedback } from './feedback.js'
import { IdleLogout } from './idle-logout.js'
import { PageError } from './page-error.js'
import { plainHttpRefusal } from './plain-http.js'
import type { AppContext, DeviceStatus, View, ViewLink, WatchEvent } from './view.js'
import { ageWords, unixTimeWords } from './views/time-words.js'
import { VIEWS } from './views/views.js'

/** What login checks the passphrase with: the narrowest scope the first screen (status extras) needs. */
const LOGIN_SCOPE = 'system:config'

const ui = {
  deviceLine: byId<HTMLParagraphElement>('device-line'),
  unreachable: byId<HTMLParagraphElement>('unreachable'),
  idleWarning: byId<HTMLDivElement>('idle-warning'),
  idleWords: byId<HTMLParagraphElement>('idle-words'),
  stay: byId<HTMLButtonElement>('stay'),
  nav: byId<HTMLElement>('nav'),
  sessionLine: byId<HTMLParagraphElement>('session'),
  who: byId<HTMLSpanElement>('who'),
  logout: byId<HTMLButtonElement>('logout'),
  banner: byId<HTMLParagraphElement>('fail-banner'),
  login: byId<HTMLElement>('login'),
  loginReason: byId<HTMLParagraphElement>('login-reason'),
  loginRefused: byId<HTMLDivElement>('login-refused'),
  loginForm: byId<HTMLFormElement>('login-form'),
  passphrase: byId<HTMLInputElement>('passphrase'),
  remoteLogin: byId<HTMLDivElement>('remote-login'),
  screen: byId<HTMLElement>('screen'),
  screenTitle: byId<HTMLHeadingElement>('screen-title'),
  view: byId<HTMLDivElement>('view'),
}

const feedback = new Feedback(byId('notice'), byId('error'))
const watch = new DeviceWatch()
const idle = new IdleLogout({
  warn() {
    ui.idleWords.textContent = 'You will be logged out in a minute, for lack of use.'
    ui.idleWarning.hidden = false
  },
  unwarn() {
    ui.idleWarning.hidden = true
    ui.idleWords.textContent = ''
  },
  end: (minutes) => logOut(`Logged out after ${minutes} minutes without use.`),
})
let context: AppContext | undefined
let leaveScreen: (() => void) | void = undefined
let shown = 0

/** The shell's part of the watch: the banners, and a new boot ending the session. */
function watched(event: WatchEvent): void {
  if (event.kind === 'silent') {
    const since = unixTimeWords(Math.floor(event.since / 1000)).replace(/^\S+ /, '')
    ui.unreachable.textContent = `The device has not answered since ${since} (${ageWords(event.since)}). Retrying…`
    ui.unreachable.hidden = false
    ui.screen.classList.add('stale')
    const was = 'When it last answered, the device was in'
    ui.banner.textContent = ui.banner.textContent.replace(/^The device is in/, was)
    return
  }
  ui.unreachable.hidden = true
  ui.unreachable.textContent = ''
  ui.screen.classList.remove('stale')
  showDeviceLine(event.status)
  if (event.newBoot && context) logOut(RESTARTED_MESSAGE)
}

function showDeviceLine(status: DeviceStatus): void {
  ui.deviceLine.textContent = status.inited === false ? 'This device has no owner yet: set it up below.' : ''
  ui.banner.hidden = status.fls_state === 0
  ui.banner.textContent =
    status.fls_state === 0 ? '' : `The device is in the fail state: ${describeFailState(status.fls_state)}.`
}

function viewFor(hash: string): ViewLink {
  const path = hash.replace(/^#\//, '')
  return VIEWS.find((view) => view.path === path) ?? VIEWS[0]!
}

/** Shows the screen the URL names; a later navigation while it loads wins. */
async function showScreen(): Promise<void> {
  const ctx = context
  if (!ctx) return
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
    const screen = await loadScreen(view)
    // Loading took a while: the owner may have gone to another screen, or logged out, meanwhile.
    const leave = turn === shown && context === ctx ? await screen.show(root, ctx) : undefined
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

/** A screen's code; a chunk that cannot be fetched (the device went away, or now serves another app) says so. */
async function loadScreen(view: ViewLink): Promise<View> {
  try {
    return await view.load()
  } catch {
    throw new Error(
      `The ${view.title.toLowerCase()} screen could not be loaded: the device did not answer, or its app was ` +
        'replaced. Reload the page.',
    )
  }
}

function showSession(session: DeviceSession | undefined): void {
  ui.login.hidden = session !== undefined
  ui.screen.hidden = session === undefined
  ui.nav.hidden = session === undefined
  ui.sessionLine.hidden = session === undefined
  ui.who.textContent = session ? whoWords(session) : ''
}

/**
 * Who the session is, honestly: which passphrase logged in (the token's `sub`); an approved one is the
 * authenticator's, of one scope, until its expiry.
 */
function whoWords(session: DeviceSession): string {
  const { approved } = session
  if (!approved) return `Logged in as ${session.user} (${session.role === 'M' ? 'master' : 'user'} passphrase).`
  return (
    `Logged in by approval on a phone (authenticator ${approved.kid}): role ExtAuth, scope ${approved.scope}, ` +
    `until ${unixTimeWords(approved.exp)}.`
  )
}

function startSession(session: DeviceSession): void {
  context = { session, feedback, secure: location.protocol === 'https:', status: () => watch.read(), watch, logOut }
  // The session may end itself: a live token the device refused (it restarted).
  session.whenEnded((message) => {
    if (context?.session === session) logOut(message)
  })
  // The session's boot is the one answering from now on (a boot before the login ended no session of this one).
  watch.rebase()
  void watch.read().catch(() => undefined)
  ui.loginReason.hidden = true
  ui.loginReason.textContent = ''
  showSession(session)
  idle.start()
}

/** Ends the session (nothing of it is kept), back to the login with `message` as the reason. */
function logOut(message: string): void {
  const ending = context
  leaveScreen?.()
  leaveScreen = undefined
  context = undefined
  idle.stop()
  ending?.session.end(message)
  ui.view.replaceChildren()
  showSession(undefined)
  feedback.progress(message)
  void showLogin(message)
}

/**
 * The login: the passphrase form and, with a paired phone, the approval; `reason` says why a session ended. Over
 * plain HTTP from another host, the reason it is refused instead, with the HTTPS link.
 */
async function showLogin(reason?: string): Promise<void> {
  ui.loginReason.textContent = reason ?? ''
  ui.loginReason.hidden = reason === undefined
  // A device with no owner (fresh, or after a wipeout) shows the set-up wizard above the login instead.
  void watch.read().then(offerSetup, () => undefined)
  const refusal = await plainHttpRefusal()
  ui.loginRefused.replaceChildren(...(refusal ? [refusal] : []))
  ui.loginRefused.hidden = !refusal
  ui.loginForm.hidden = refusal !== undefined
  ui.remoteLogin.hidden = refusal !== undefined
  if (refusal) return
  if (reason !== undefined) ui.passphrase.focus()
  // A place of its own: an offer still deciding from an earlier call fills one no longer shown.
  const offer = h('div')
  ui.remoteLogin.replaceChildren(offer)
  await offerApproval(offer, feedback, approvedLogin)
}

/** A device with no owner gets the set-up wizard, loaded now: it runs once in its life. */
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
      if (await plainHttpRefusal()) throw new PageError('Not sent: this page came over plain HTTP (see above).')
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

watch.listen(watched)
// Not a feedback action: one would drop a login submitted while the first read is still under way.
const READING = 'Reading the device…'
feedback.progress(READING)
void watch
  .read()
  .catch((error: unknown) => feedback.fail(error))
  .finally(() => {
    if (document.getElementById('notice')?.textContent === READING) feedback.progress('')
  })
  .then(() => showLogin())
