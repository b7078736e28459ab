// Settings → Authenticators: the phones that approve logins (ext-auth-contract §1.6, §3.4.7), as the device and
// the cloud know them, a new one paired (pairing-flow.ts), one removed from both sides after a confirmation.
// Pairing and its proofs are the user's alone (role U): a session an authenticator approved is told so.
import { BrokerRefusedError, deviceProof, pairingIdentity, pairings, printable } from '../../../client/browser.js'
import type { BrokerClient, Subscriber } from '../../../client/browser.js'
import { appCloud, NO_CLOUD } from '../../app-cloud.js'
import type { DeviceSession } from '../../device-session.js'
import { h } from '../../dom.js'
import { describeError } from '../../feedback.js'
import { PageError } from '../../page-error.js'
import type { AppContext } from '../../view.js'
import { confirmDialog } from '../keys/confirm-dialog.js'
import { unixTimeWords } from '../time-words.js'
import { pairPhone } from './pairing-flow.js'

/** One pairing as either side knows it. */
interface Row {
  kid: string
  pid: string
  label: string
  /** Unix seconds; 0 when unknown. */
  created: number
  onDevice: boolean
  atCloud: boolean
}

/** The panel, and what leaving the screen does: a pairing still waiting is cancelled (withdrawn at the cloud). */
export function authenticatorsPanel(ctx: AppContext): { element: HTMLElement; leave(): void } {
  const body = h('div', {}, h('p', {}, 'Reading the authenticators…'))
  const leaving = new AbortController()
  const panel = h(
    'section',
    { 'aria-labelledby': 'authenticators-title' },
    h('h3', { id: 'authenticators-title' }, 'Authenticators'),
    h(
      'p',
      { class: 'hint' },
      'Phones paired with the device approve logins on request, without the passphrase. ' +
        'The cloud carries the messages and learns no secret.',
    ),
    body,
  )
  void fill(ctx, body, leaving.signal)
  return { element: panel, leave: () => leaving.abort() }
}

async function fill(ctx: AppContext, body: HTMLElement, leaving: AbortSignal): Promise<void> {
  if (ctx.session.approved) {
    body.replaceChildren(
      h('p', {}, 'Pairing and unpairing authenticators need the passphrase login: this session was approved.'),
    )
    return
  }
  const broker = await appCloud().catch(() => undefined)
  if (!broker) {
    body.replaceChildren(h('p', {}, NO_CLOUD))
    return
  }
  const list = h('div', { 'aria-live': 'polite' })
  const area = h('div')
  const cancel = h('button', { type: 'button', hidden: true }, 'Cancel the pairing')
  const pair = h('button', { type: 'button' }, 'Pair a phone')
  let stop: AbortController | undefined
  cancel.addEventListener('click', () => stop?.abort())
  leaving.addEventListener('abort', () => stop?.abort())
  pair.addEventListener('click', () => {
    stop = new AbortController()
    const signal = stop.signal
    pair.disabled = true
    cancel.hidden = false
    void ctx.feedback
      .run('Starting the pairing…', () => pairPhone(ctx, broker, area, signal))
      .finally(() => {
        area.replaceChildren()
        cancel.hidden = true
        pair.disabled = false
        void showList(ctx, broker, list)
      })
  })
  body.replaceChildren(list, h('div', { class: 'buttons' }, pair, cancel), area)
  await showList(ctx, broker, list)
}

async function showList(ctx: AppContext, broker: BrokerClient, list: HTMLElement): Promise<void> {
  let rows: Row[]
  try {
    rows = await bothSides(ctx.session, broker)
  } catch (error) {
    list.replaceChildren(h('p', {}, 'The authenticators could not be read.'))
    ctx.feedback.fail(error)
    return
  }
  if (rows.length === 0) {
    list.replaceChildren(h('p', {}, 'No phone is paired with the device.'))
    return
  }
  list.replaceChildren(
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { id: 'authenticators' },
        h('caption', {}, 'Paired authenticators'),
        h(
          'thead',
          {},
          h('tr', {}, ...['Label', 'Paired', 'KID', 'On the device', 'At the cloud', ''].map((t) => h('th', {}, t))),
        ),
        h('tbody', {}, ...rows.map((row) => rowOf(ctx, broker, row, list))),
      ),
    ),
  )
}

function rowOf(ctx: AppContext, broker: BrokerClient, row: Row, list: HTMLElement): HTMLTableRowElement {
  const label = printable(row.label) || '(no label)'
  const unpair = async () => {
    const sides = [row.onDevice && 'on the device', row.atCloud && 'at the cloud'].filter(Boolean).join(' and ')
    const sure = await confirmDialog(
      `Unpair ${label}?`,
      `The pairing is removed ${sides}: this phone approves nothing more. Pairing it again takes a new scan.`,
      'Unpair',
    )
    if (!sure) return
    await ctx.feedback.run(`Unpairing ${label}…`, async () => {
      const told = await unpairBoth(ctx.session, broker, row)
      await showList(ctx, broker, list)
      return `Unpaired ${label}: ${told}.`
    })
  }
  return h(
    'tr',
    {},
    h('td', {}, label),
    h('td', {}, row.created === 0 ? 'unknown' : unixTimeWords(row.created)),
    h('td', { class: 'kid' }, row.kid),
    h('td', {}, row.onDevice ? 'yes' : 'no'),
    h('td', {}, row.atCloud ? 'yes' : 'no (it gets no requests)'),
    h(
      'td',
      {},
      h('button', { type: 'button', 'aria-label': `Unpair ${label}`, onclick: () => void unpair() }, 'Unpair'),
    ),
  )
}

/** The device's pairings (keymgmt search) and the cloud's (the device's proof), one row per pid. */
async function bothSides(session: DeviceSession, broker: BrokerClient): Promise<Row[]> {
  const device = await pairings(session)
  const atCloud = await broker.subscribersList(await deviceProof(session, broker, (await pairingIdentity(session)).eid))
  const cloudPids = new Set(atCloud.map((s) => s.pid))
  const devicePids = new Set(device.map((p) => p.pid))
  return [
    ...device.map((p) => ({ ...p, onDevice: true, atCloud: cloudPids.has(p.pid) })),
    ...atCloud.filter((s) => !devicePids.has(s.pid)).map(cloudOnly),
  ]
}

function cloudOnly(s: Subscriber): Row {
  return { kid: printable(s.kid), pid: s.pid, label: s.label, created: s.created, onDevice: false, atCloud: true }
}

/** The device's key first: from then on the device seals nothing for that phone, whatever the cloud does. */
async function unpairBoth(session: DeviceSession, broker: BrokerClient, row: Row): Promise<string> {
  const told: string[] = []
  if (row.onDevice) {
    await session.request(`/api/keymgmt/delete/${row.kid}`, 'keymgmt:del', { method: 'DELETE' })
    told.push('removed from the device')
  }
  try {
    await broker.subscribersDelete({
      ...(await deviceProof(session, broker, (await pairingIdentity(session)).eid)),
      pid: row.pid,
    })
    told.push('removed from the cloud')
  } catch (error) {
    if (error instanceof BrokerRefusedError && error.status === 404) told.push('the cloud had no such pairing')
    else if (row.onDevice)
      throw new PageError(`Removed from the device, but not from the cloud: ${describeError(error)}`)
    else throw error
  }
  return told.join(', ')
}
