// Pairing (contract §4.1): the invitation pasted or scanned, the device it names shown, then Accept or Refuse.
import { parsePairingInvite, type PairingInvite, type PairingOffer } from '../authenticator/browser.js'
import { printable } from '../client/browser.js'
import { deviceName as shownName, shownText as shown } from './device-name.js'
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
  const form = byId<HTMLFormElement>('pair-form')
  const input = byId<HTMLTextAreaElement>('invite')
  const scan = byId<HTMLButtonElement>('scan')
  const camera = byId<HTMLDivElement>('camera')
  const video = byId<HTMLVideoElement>('video')
  let scanning: AbortController | undefined

  const stopScanning = () => {
    scanning?.abort()
    scanning = undefined
    camera.hidden = true
    scan.hidden = false
  }

  const read = (text: string) =>
    feedback.run('Reading the invitation…', async () => {
      const offer = await auth.offer(ownOrigin(parsePairingInvite(text)))
      input.value = ''
      showOffer(offer)
      return 'Check the device below, then accept or refuse.'
    })

  const showOffer = (offer: PairingOffer) => {
    start.hidden = true
    const { invite, ipinfo } = offer
    const place = [ipinfo.city, ipinfo.country].filter(Boolean).join(', ')
    const close = () => {
      offerBox.replaceChildren()
      start.hidden = false
      byId('pair-title').focus()
    }
    const answer = (doing: string, action: () => Promise<string>) => async () => {
      if (await feedback.run(doing, action)) close()
    }
    const accept = answer('Pairing…', async () => {
      await auth.accept(offer)
      await view.paired()
      return `Paired with ${shownName(invite)}. The device finishes the pairing on its side.`
    })
    const refuse = answer('Refusing…', async () => {
      await auth.decline(offer)
      return `Refused: ${shownName(invite)} is not paired.`
    })
    const heading = h('h3', { id: 'offer-title', tabindex: -1 }, `Pair with ${shownName(invite)}?`)
    offerBox.replaceChildren(
      h(
        'article',
        { class: 'card', 'aria-labelledby': 'offer-title' },
        heading,
        facts([
          ['Host name', shown(invite.hostname)],
          ['User', shown(invite.user)],
          ['E-mail', shown(invite.email)],
          ['Asked from', shown(ipinfo.ip) && `${shown(ipinfo.ip)}${place ? ` (${printable(place)})` : ''}`],
        ]),
        h('p', { class: 'hint' }, 'Accept only when you started this pairing yourself, on this device.'),
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', class: 'primary', onclick: accept }, 'Accept'),
          h('button', { type: 'button', onclick: refuse }, 'Refuse'),
        ),
      ),
    )
    heading.focus()
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void read(input.value)
  })

  scan.addEventListener('click', () => {
    feedback.clearError()
    scanning = new AbortController()
    camera.hidden = false
    scan.hidden = true
    feedback.tell('Point the camera at the QR code.')
    scanQrCode(video, scanning.signal)
      .then((text) => {
        stopScanning()
        if (text !== undefined) void read(text)
        else feedback.tell('')
      })
      .catch((error: unknown) => {
        stopScanning()
        feedback.tell('')
        feedback.fail(error)
      })
  })
  byId<HTMLButtonElement>('stop-scan').addEventListener('click', stopScanning)
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
