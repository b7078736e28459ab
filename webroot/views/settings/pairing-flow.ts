// Pairing a phone from the page (ext-auth-contract Sequence A), as `hemctl auth pair` does it: the device's
// identity, a broker key bound to it, the device's request, the registration at the broker, the QR code and its
// link shown, a wait for the phone, then the device validates the reply and the broker is told. Cancel withdraws
// the registration at the broker at any step.
import {
  BrokerClient,
  extInit,
  extValidate,
  pairingIdentity,
  pairingQrPayload,
  printable,
} from '../../../client/browser.js'
import { parseExtJwt } from '../../../protocol/browser.js'
import { clockWords, waitOnCloud } from '../../cloud-wait.js'
import { copyButton } from '../../copy-button.js'
import { field, h } from '../../dom.js'
import { PageError } from '../../page-error.js'
import type { AppContext } from '../../view.js'
import { qrCodeSvg } from './qr-code-svg.js'

/** The pairing did not happen: the phone declined, or the registration expired. */
export class PairingEndedError extends PageError {
  override readonly name = 'PairingEndedError'
}

/**
 * Runs one pairing in `area` (emptied at the end); resolves to what the status line says. `signal` is the
 * owner's Cancel.
 */
export async function pairPhone(
  ctx: AppContext,
  broker: BrokerClient,
  area: HTMLElement,
  signal: AbortSignal,
): Promise<string> {
  const device = await pairingIdentity(ctx.session)
  const { epk } = await broker.deviceSession(device.eid)
  const { request, eid } = await extInit(ctx.session, epk)
  if (eid !== device.eid) throw new PageError('The device answered ext/init with another eid than its own.')
  const { rid, link, exp } = await broker.registerInit({ epk, eid, request })
  if (signal.aborted) return withdrawn(broker, rid)
  const started = Date.now() / 1000
  const until = exp ?? started + 600
  const waiting = h('progress', { id: 'pairing-progress', max: Math.max(1, Math.round(until - started)), value: 0 })
  const left = h('span', {}, '')
  area.replaceChildren(
    h(
      'div',
      { class: 'pairing' },
      qrCodeSvg(pairingQrPayload(link, request, device), 'QR code of the pairing, for the phone to scan'),
      h(
        'div',
        {},
        h('p', {}, 'Scan the code with the authenticator on your phone, or give it this link:'),
        linkField(link),
        h('label', { for: waiting.id }, 'Waiting for the phone '),
        waiting,
        h('p', {}, left),
      ),
    ),
  )
  const answer = await waitOnCloud(
    async () => {
      const state = await broker.registerCheck(rid)
      return state.state === 'pending' ? undefined : state
    },
    {
      until,
      signal,
      tick(secondsLeft) {
        waiting.value = Math.max(0, Math.round(Date.now() / 1000 - started))
        left.textContent = `The pairing expires in ${clockWords(secondsLeft)}.`
        ctx.feedback.progress(`Waiting for the phone to scan the code (${clockWords(secondsLeft)} left)…`)
      },
    },
  )
  if (answer === 'cancelled') return withdrawn(broker, rid)
  if (answer === 'expired') throw new PairingEndedError('No phone answered before the pairing expired.')
  if (answer.state === 'closed')
    throw new PairingEndedError(
      answer.reason === 'refused'
        ? 'The phone declined the pairing.'
        : `The cloud closed the pairing: ${printable(answer.reason)}.`,
    )
  ctx.feedback.progress('The phone answered: the device checks its reply…')
  const validated = await extValidate(ctx.session, answer.pid, answer.reply)
  await broker.registerFinalise(rid, validated)
  return `Paired “${printable(labelOf(answer.reply))}” (KID ${validated.kid}).`
}

/** The link as text to copy (an authenticator given text instead of a camera). */
function linkField(link: string): HTMLElement {
  const shown = h('input', { type: 'text', readonly: true, value: link, class: 'link', spellcheck: 'false' })
  const copy = copyButton('Copy the link', () => {
    shown.select()
    return link
  })
  return h('div', {}, field('Pairing link', shown), copy)
}

async function withdrawn(broker: BrokerClient, rid: string): Promise<string> {
  const told = await broker.registerWithdraw(rid)
  return told === 'answered'
    ? 'Pairing cancelled: the phone had already answered, and the device stores nothing of it.'
    : 'Pairing cancelled: the registration is withdrawn at the cloud.'
}

/** The authenticator's name for itself, as its reply gives it (the device verified the reply). */
function labelOf(reply: string): string {
  const { label } = parseExtJwt(reply).payload
  return typeof label === 'string' ? label : ''
}
