// Requests (contract §4.2): polled every 2 s while the page is visible (no push), each shown in words with the
// requester, the period and the storage write switch, then allowed or denied. A request answered elsewhere,
// withdrawn or expired leaves with a note.
import { BrokerAnswerError, isPeriod, type Approval, type PendingEvent } from '../authenticator/browser.js'
import { printable } from '../client/browser.js'
import { EXT_PERIODS } from '../protocol/browser.js'
import { deviceName, shownText } from './device-name.js'
import { byId, facts, h, uid } from './dom.js'
import type { Feedback } from './feedback.js'
import { scopeWords } from './scope-words.js'
import type { PageAuthenticator } from './web-authenticator.js'

export const POLL_MS = 2000

const PERIOD_WORDS: Readonly<Record<number, string>> = {
  900: '15 minutes',
  3600: '1 hour',
  28800: '8 hours',
  86400: '24 hours',
}

interface Card {
  element: HTMLElement
  approval: Approval
  /** Being answered: the poll leaves it to the answer. */
  busy: boolean
  words(): string
}

export class ApprovalsView {
  private readonly box = byId<HTMLDivElement>('requests')
  private readonly empty = byId<HTMLParagraphElement>('requests-empty')
  private readonly cards = new Map<string, Card>()
  /**
   * Events not to open again: those that do not open (expired, a bad tag, gone: never shown, never answered, §4.2),
   * and those answered here (a poll that listed one before its answer landed must not show it again).
   */
  private readonly closed = new Set<string>()
  private timer: ReturnType<typeof setTimeout> | undefined
  private polling = false
  private pollFailed = false

  constructor(
    private readonly auth: PageAuthenticator,
    private readonly feedback: Feedback,
    /** After each round: the round may have forgotten pairings the device removed. */
    private readonly afterRound: () => Promise<void>,
  ) {}

  /** Polls now and every POLL_MS while the page is visible; a page coming back into view polls at once. */
  start(): void {
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') void this.poll()
      else clearTimeout(this.timer)
    })
    void this.poll()
  }

  private async poll(): Promise<void> {
    if (this.polling) return
    this.polling = true
    clearTimeout(this.timer)
    try {
      await this.round()
      await this.afterRound()
      if (this.pollFailed) this.feedback.clearError()
      this.pollFailed = false
    } catch (error) {
      this.pollFailed = true
      this.feedback.fail(error)
    } finally {
      this.polling = false
      if (document.visibilityState === 'visible') this.timer = setTimeout(() => void this.poll(), POLL_MS)
    }
  }

  private async round(): Promise<void> {
    const pending = await this.auth.pendingEvents()
    const now = Date.now() / 1000
    const live = new Set(pending.map(keyOf))
    for (const [key, card] of this.cards) {
      if (card.busy) continue
      if (!live.has(key)) this.drop(key, `The request to ${card.words()} was answered elsewhere, withdrawn or expired.`)
      else if (now > card.approval.opened.event.exp) this.drop(key, `The request to ${card.words()} expired.`)
    }
    for (const key of this.closed) if (!live.has(key)) this.closed.delete(key)
    for (const event of pending) {
      const key = keyOf(event)
      if (this.cards.has(key) || this.closed.has(key)) continue
      const approval = await this.opened(event)
      if (approval) this.add(key, approval)
      else this.closed.add(key)
    }
    this.empty.hidden = this.cards.size > 0
  }

  /** The event opened; undefined when it does not open or the broker says it is over (answered, withdrawn). */
  private async opened(event: PendingEvent): Promise<Approval | undefined> {
    try {
      return await this.auth.open(event)
    } catch (error) {
      if (isOver(error)) return undefined
      throw error
    }
  }

  /** The request leaves the page, and is not opened again while the broker still lists it. */
  private drop(key: string, note?: string): void {
    this.cards.get(key)?.element.remove()
    this.cards.delete(key)
    this.closed.add(key)
    this.empty.hidden = this.cards.size > 0
    if (note) this.feedback.tell(note)
  }

  private add(key: string, approval: Approval): void {
    const { opened, pairing } = approval
    const asked = opened.scope.split('#')[0] ?? ''
    const titleId = uid('request')
    const periodName = uid('period')
    const writeSwitch = opened.writeSwitch
      ? h('input', { type: 'checkbox', id: uid('write'), checked: opened.writable })
      : undefined
    const words = () => scopeWords(asked, opened.key, writeSwitch?.checked)
    const what = h('p', { class: 'scope' }, `To ${words()}`)
    writeSwitch?.addEventListener('change', () => (what.textContent = `To ${words()}`))
    const periods = h(
      'fieldset',
      { class: 'periods' },
      h('legend', {}, 'Allow for'),
      ...EXT_PERIODS.map((period, i) => {
        const id = uid('period')
        return h(
          'span',
          { class: 'choice' },
          h('input', { type: 'radio', name: periodName, id, value: period, checked: i === 0 }),
          h('label', { for: id }, PERIOD_WORDS[period] ?? `${period} s`),
        )
      }),
    )
    const { ipinfo } = opened.event
    const place = [ipinfo?.city, ipinfo?.country].filter(Boolean).join(', ')
    const card: Card = { element: h('article'), approval, busy: false, words }
    // feedback.run reports a failure itself and never throws.
    const answer = (doing: string, act: () => Promise<string>) => async () => {
      card.busy = true
      if (await this.feedback.run(doing, act)) this.drop(key)
      card.busy = false
    }
    const allow = answer('Allowing…', async () => {
      const chosen = Number(periods.querySelector<HTMLInputElement>('input:checked')?.value)
      const period = isPeriod(chosen) ? chosen : EXT_PERIODS[0]
      await this.answered(key, () => this.auth.allow(approval, period, writeSwitch?.checked))
      return `Allowed for ${PERIOD_WORDS[period]}: ${words()}.`
    })
    const deny = answer('Denying…', async () => {
      await this.answered(key, () => this.auth.deny(approval))
      return `Denied: ${words()}.`
    })
    card.element = h(
      'article',
      { class: 'card request', 'aria-labelledby': titleId },
      h('h3', { id: titleId }, `${deviceName(pairing)} asks for your approval`),
      what,
      h('p', {}, h('code', {}, printable(opened.scope.split('#')[0] ?? ''))),
      facts([
        ['Asked from', shownText(ipinfo?.ip) && `${shownText(ipinfo?.ip)}${place ? ` (${printable(place)})` : ''}`],
        ['Context', shownText(opened.event.ctx)],
        ['Expires', new Date(opened.event.exp * 1000).toLocaleTimeString()],
      ]),
      periods,
      writeSwitch &&
        h(
          'div',
          { class: 'field switch' },
          writeSwitch,
          h('label', { for: writeSwitch.id }, 'Allow writing to the disk'),
        ),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'primary', onclick: allow }, 'Allow'),
        h('button', { type: 'button', class: 'danger', onclick: deny }, 'Deny'),
      ),
    )
    this.cards.set(key, card)
    this.box.append(card.element)
    this.empty.hidden = true
  }

  /** An answer the broker says is too late takes the request away too. */
  private async answered(key: string, send: () => Promise<void>): Promise<void> {
    try {
      await send()
    } catch (error) {
      if (isOver(error)) this.drop(key)
      throw error
    }
  }
}

/** The broker's word that a request is over: answered elsewhere, withdrawn, refused (410) or expired (404). */
function isOver(error: unknown): boolean {
  return error instanceof BrokerAnswerError && (error.kind === 'gone' || error.kind === 'expired')
}

function keyOf(event: PendingEvent): string {
  return `${event.eventId}/${event.pid}`
}
