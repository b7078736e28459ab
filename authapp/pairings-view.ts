// The pairings this phone holds (contract §4.3): each device with its owner's names and date, and Unpair.
import type { StoredPairing } from '../authenticator/browser.js'
import { extAuthKid, fromBase64 } from '../protocol/browser.js'
import { deviceName, shownText as shown } from './device-name.js'
import { byId, facts, h, uid } from './dom.js'
import type { Feedback } from './feedback.js'
import type { PageAuthenticator } from './web-authenticator.js'

export class PairingsView {
  private readonly list = byId<HTMLUListElement>('pairings')
  private readonly empty = byId<HTMLParagraphElement>('pairings-empty')

  constructor(
    private readonly auth: PageAuthenticator,
    private readonly feedback: Feedback,
  ) {}

  /** The pids shown now: a poll that changes nothing redraws nothing (focus and an open confirmation stay). */
  private shownPids = ''

  async show(): Promise<void> {
    const pairings = (await this.auth.pairings()).sort((a, b) => a.created - b.created)
    this.shownPids = pairings.map((pairing) => pairing.pid).join(' ')
    this.empty.hidden = pairings.length > 0
    this.list.replaceChildren(...pairings.map((pairing) => this.item(pairing)))
  }

  /** Redraws when the pairings changed: the poll forgets those the device removed (contract §4.3). */
  async refresh(): Promise<void> {
    const pids = (await this.auth.pairings()).map((pairing) => pairing.pid)
    if (pids.sort().join(' ') !== this.shownPids.split(' ').sort().join(' ')) await this.show()
  }

  private item(pairing: StoredPairing): HTMLLIElement {
    const name = deviceName(pairing)
    const kid = extAuthKid(fromBase64(pairing.aid))
    const titleId = uid('pairing')
    const unpair = h('button', { type: 'button' }, 'Unpair')
    const confirm = h('div', { class: 'actions', hidden: true })
    unpair.addEventListener('click', () => {
      unpair.hidden = true
      confirm.hidden = false
      confirm.querySelector('button')?.focus()
    })
    const keep = () => {
      confirm.hidden = true
      unpair.hidden = false
      unpair.focus()
    }
    const remove = () =>
      void this.feedback.run(`Unpairing ${name}…`, async () => {
        await this.auth.unpair(pairing.pid)
        await this.show()
        byId('pairings-title').focus()
        return (
          `Unpaired ${name}: the broker sends it no more requests and this phone forgot its key. ` +
          `Delete this phone's key ${kid} on the device too (its app's Authenticators, or hemctl auth unpair ${kid}).`
        )
      })
    confirm.append(
      h('p', {}, `Unpair ${name}? This phone can no longer approve its logins, until paired again.`),
      h('button', { type: 'button', class: 'danger', onclick: remove }, `Unpair ${name}`),
      h('button', { type: 'button', onclick: keep }, 'Keep it'),
    )
    return h(
      'li',
      { class: 'card', 'aria-labelledby': titleId },
      h('h3', { id: titleId }, name),
      facts([
        ['User', shown(pairing.user)],
        ['E-mail', shown(pairing.email)],
        ['Paired on', new Date(pairing.created * 1000).toLocaleString()],
        ['Key on the device', kid],
        ['This phone', shown(pairing.label)],
      ]),
      h('div', { class: 'actions' }, unpair),
      confirm,
    )
  }
}
