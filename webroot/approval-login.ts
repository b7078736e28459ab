// The login screen's "Approve on my phone" (ext-auth-contract Sequence B, as `hemctl login --remote`): offered
// when the device's cloud says the device has a paired phone, which needs no passphrase (the public login
// challenge names the eid, the broker's eid-bound session says `paired`). The device's challenge goes to the
// phone through the broker, the page waits with a countdown to the request's expiry (Cancel withdraws it), and
// the device exchanges the phone's approval for a token of the scope asked, role ExtAuth.
import { extRequest, extToken, printable, type BrokerClient } from '../client/browser.js'
import { appCloud } from './app-cloud.js'
import { clockWords, waitOnCloud } from './cloud-wait.js'
import { DeviceSession, deviceIdentity, openDevice } from './device-session.js'
import { h } from './dom.js'
import type { Feedback } from './feedback.js'
import { PageError } from './page-error.js'

/** What the app asks the phone for: the first screens' scope (dashboard, settings read, health). */
export const APPROVAL_SCOPE = 'system:config'
/** The token lives at most this long, whatever period the phone grants (the passphrase login's hour). */
const APPROVAL_LIFETIME_SECONDS = 3600
/** What the phone shows beside the scope. */
const NOTE = 'Log in to the HEM management app'

/** The phone said no, the request expired or was closed: no session. */
export class ApprovalRefusedError extends PageError {
  override readonly name = 'ApprovalRefusedError'
}

/**
 * Fills `area` with the offer when the device has a paired phone (nothing otherwise); `loggedIn` takes the
 * approved session. `area` is aria-busy until the offer is decided.
 */
export async function offerApproval(
  area: HTMLElement,
  feedback: Feedback,
  loggedIn: (session: DeviceSession) => void,
): Promise<void> {
  area.replaceChildren()
  area.setAttribute('aria-busy', 'true')
  try {
    await offerIn(area, feedback, loggedIn)
  } finally {
    area.removeAttribute('aria-busy')
  }
}

async function offerIn(
  area: HTMLElement,
  feedback: Feedback,
  loggedIn: (session: DeviceSession) => void,
): Promise<void> {
  const broker = await appCloud().catch(() => undefined)
  if (!broker) return
  let identity: { eid: string; user: string }
  try {
    identity = await deviceIdentity()
  } catch {
    return // not personalised, or not answering: the status line says which
  }
  try {
    if (!(await broker.deviceSession(identity.eid)).paired) return
  } catch {
    area.append(h('p', { class: 'hint' }, 'The cloud did not answer: approving on a phone is not offered now.'))
    return
  }
  const countdown = h('p', { id: 'approval-countdown', hidden: true })
  const cancel = h('button', { type: 'button', hidden: true }, 'Cancel')
  const approve = h('button', { type: 'button' }, 'Approve on my phone')
  let stop: AbortController | undefined
  cancel.addEventListener('click', () => stop?.abort())
  approve.addEventListener('click', () => {
    stop = new AbortController()
    const signal = stop.signal
    approve.disabled = true
    cancel.hidden = false
    void feedback
      .run('Asking the device for a challenge, and the cloud to carry it…', () =>
        askPhone(broker, identity.user, countdown, signal, feedback, loggedIn),
      )
      .finally(() => {
        countdown.hidden = true
        cancel.hidden = true
        approve.disabled = false
      })
  })
  area.append(
    h('h3', {}, 'Or approve on your phone'),
    h(
      'p',
      { class: 'hint' },
      `A paired phone approves a session of scope ${APPROVAL_SCOPE} (the dashboard, settings to read, health), ` +
        'no passphrase asked.',
    ),
    h('div', { class: 'buttons' }, approve, cancel),
    countdown,
  )
}

async function askPhone(
  broker: BrokerClient,
  user: string,
  countdown: HTMLElement,
  signal: AbortSignal,
  feedback: Feedback,
  loggedIn: (session: DeviceSession) => void,
): Promise<string | void> {
  const { epk } = await broker.anonymousSession()
  const exp = Math.floor(Date.now() / 1000) + APPROVAL_LIFETIME_SECONDS
  const requested = await extRequest(openDevice, { epk, scope: APPROVAL_SCOPE, exp, note: NOTE })
  const event = await broker.eventNew(requested)
  if (event.sentcnt === 0) {
    await broker.eventDelete(event.eventid).catch(() => undefined)
    throw new ApprovalRefusedError('No paired phone got the request: pair one in Settings → Authenticators.')
  }
  countdown.hidden = false
  const answer = await waitOnCloud(
    async () => {
      const state = await broker.eventCheck(event.eventid)
      return state.state === 'pending' ? undefined : state
    },
    {
      until: event.exp,
      signal,
      tick(left) {
        countdown.textContent = `The request expires in ${clockWords(left)}.`
        feedback.progress(`Waiting for your phone to approve (${clockWords(left)} left)…`)
      },
    },
  )
  if (answer === 'cancelled') {
    const told = await broker.eventDelete(event.eventid)
    return told === 'withdrawn'
      ? 'Cancelled: the request is withdrawn at the cloud.'
      : 'Cancelled: the request was already over at the cloud.'
  }
  if (answer === 'expired') {
    await broker.eventDelete(event.eventid).catch(() => undefined)
    throw new ApprovalRefusedError('The request expired before your phone answered: you are not logged in.')
  }
  if (answer.state === 'denied') throw new ApprovalRefusedError('Denied on your phone: you are not logged in.')
  if (answer.state === 'closed')
    throw new ApprovalRefusedError(
      answer.reason === 'withdrawn'
        ? 'The request was withdrawn: you are not logged in.'
        : `The request ${printable(answer.reason)}: you are not logged in.`,
    )
  feedback.progress('Approved: the device makes the token…')
  const { token } = await extToken(openDevice, answer.authreply)
  loggedIn(DeviceSession.approvedBy(token, user))
}
