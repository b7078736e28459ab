// Pairing (contract §4.1): the invitation pasted or scanned, the device it names shown, then Accept or Refuse.
import { parsePairingInvite, type PairingInvite, type PairingOffer } from '../authenticator/browser.js'
import { printable } from '../client/browser.js'
import { deviceName, shownText } from './device-name.js'
import { byId, facts, h } from './dom.js'
import type { Feedback } from './feedback.js'
import { OtherOriginError } from './page-error.js'
import { scanQrCode } from './qr-scanner.js'
import type { PageAuthenticator } from './web-authenticator.js'

export interface PairView {
  /** Called once a pairing is stored. */
  paired(): Promise<void>
}

export function setUpPairing(auth: PageAuthenticator, feedback: Feedback, view: PairView): void {
  const start = byId<HTMLDivElement>('pair-start')
  const offerBox = byId<HTMLDivElement>('offer')
  const input = byId<HTMLTextAreaElement>('invite')
  const close = () => {
    offerBox.replaceChildren()
    start.hidden = false
    byId('pair-title').focus()
  }
  const read = (text: string) =>
    feedback.run('Reading the invitation…', async () => {
      const offer = await auth.offer(ownOrigin(parsePairingInvite(text)))
      input.value = ''
      start.hidden = true
      const card = offerCard(offer, auth, feedback, { paired: view.paired, close })
      offerBox.replaceChildren(card)
      card.querySelector('h3')?.focus()
      return 'Check the device below, then accept or refuse.'
    })
  byId<HTMLFormElement>('pair-form').addEventListener('submit', (event) => {
    event.preventDefault()
    void read(input.value)
  })
  setUpScanning(feedback, read)
}

/** The camera: shown while it scans, closed once a code is read (then `read`), on Stop, or on failure. */
function setUpScanning(feedback: Feedback, read: (text: string) => Promise<unknown>): void {
  const scan = byId<HTMLButtonElement>('scan')
  const camera = byId<HTMLDivElement>('camera')
  let scanning: AbortController | undefined
  const stop = () => {
    scanning?.abort()
    scanning = undefined
    camera.hidden = true
    scan.hidden = false
  }
  scan.addEventListener('click', () => {
    feedback.clearError()
    scanning = new AbortController()
    camera.hidden = false
    scan.hidden = true
    feedback.tell('Point the camera at the QR code.')
    scanQrCode(byId<HTMLVideoElement>('video'), scanning.signal)
      .then((text) => {
        stop()
        if (text !== undefined) void read(text)
        else feedback.tell('')
      })
      .catch((error: unknown) => {
        stop()
        feedback.tell('')
        feedback.fail(error)
      })
  })
  byId<HTMLButtonElement>('stop-scan').addEventListener('click', stop)
}

/** The device an invitation names, and Accept or Refuse; `close` once answered. */
function offerCard(
  offer: PairingOffer,
  auth: PageAuthenticator,
  feedback: Feedback,
  after: { paired(): Promise<void>; close(): void },
): HTMLElement {
  const { invite, ipinfo } = offer
  const name = deviceName(invite)
  const place = [ipinfo.city, ipinfo.country].filter(Boolean).join(', ')
  const answer = (doing: string, action: () => Promise<string>) => async () => {
    if (await feedback.run(doing, action)) after.close()
  }
  const accept = answer('Pairing…', async () => {
    await auth.accept(offer)
    await after.paired()
    return `Paired with ${name}. The device finishes the pairing on its side.`
  })
  const refuse = answer('Refusing…', async () => {
    await auth.decline(offer)
    return `Refused: ${name} is not paired.`
  })
  return h(
    'article',
    { class: 'card', 'aria-labelledby': 'offer-title' },
    h('h3', { id: 'offer-title', tabindex: -1 }, `Pair with ${name}?`),
    facts([
      ['Host name', shownText(invite.hostname)],
      ['User', shownText(invite.user)],
      ['E-mail', shownText(invite.email)],
      ['Asked from', shownText(ipinfo.ip) && `${shownText(ipinfo.ip)}${place ? ` (${printable(place)})` : ''}`],
    ]),
    h('p', { class: 'hint' }, 'Accept only when you started this pairing yourself, on this device.'),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'primary', onclick: accept }, 'Accept'),
      h('button', { type: 'button', onclick: refuse }, 'Refuse'),
    ),
  )
}

/**
 * The invitation, when its link is this page's own broker: the page talks to its own origin only (its CSP would
 * refuse any other), and a link elsewhere would pair this phone with a broker its owner did not pick.
 */
function ownOrigin(invite: PairingInvite): PairingInvite {
  const origin = new URL(invite.link).origin
  if (origin !== location.origin)
    throw new OtherOriginError(
      `This invitation is for the broker at ${origin}, and this page works only with its own, ${location.origin}. ` +
        `Open ${origin}/authenticator/ to pair with that broker.`,
    )
  return invite
}
