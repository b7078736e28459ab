import type { NatsConnection, Subscription } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  type CommandReply,
  type CommandRequest,
  DEADLINE_MS,
  decode,
  encode,
  type StateEvent,
  Subjects,
} from '../protocol/index.js'
import { BusUnavailableError } from './errors.js'
import { RequestMux } from './request-mux.js'

export interface ReadModelBusOptions {
  nc: NatsConnection
  devid: string
  /** Services whose read models are projected. */
  services: readonly string[]
  logger: Logger
  /** The host clock that command deadlines are read on (`Date.now` by default; tests inject one). */
  now?: () => number
  /** The connection's reply inbox prefix (bus/services.ts `inboxPrefix`); NATS's default when absent. */
  inboxPrefix?: string
  /** Called after a projected read model changed. */
  onChange?(service: string): void
}

/**
 * The gateway's view of the bus: projections of the actors' state events (so reads cost no
 * round trip) and commands as request/reply. While the connection is down, or until a
 * projection is known to be current again after a reconnect, reads and commands are refused.
 */
export class ReadModelBus {
  private readonly subjects: Subjects
  private readonly mux: RequestMux
  private readonly models = new Map<string, StateEvent>()
  private connected = true
  private epoch = 0
  private closed = false
  private readonly subscriptions: Subscription[] = []

  constructor(private readonly o: ReadModelBusOptions) {
    this.subjects = new Subjects(o.devid)
    this.mux = new RequestMux(o.nc, o.inboxPrefix ?? '_INBOX')
    // One subscription per projected service: a service may only be allowed to read those.
    for (const service of o.services) {
      this.subscriptions.push(
        o.nc.subscribe(this.subjects.events(service), {
          callback: (err, msg) => {
            if (err) return
            try {
              this.accept(decode<StateEvent>(msg.data))
            } catch (e) {
              o.logger.warn({ err: (e as Error).message }, 'undecodable state event')
            }
          },
        }),
      )
    }
    void this.resync()
  }

  /** Called by the connection watcher. */
  setConnected(connected: boolean): void {
    this.connected = connected
    this.epoch += 1
    this.models.clear()
    if (connected) void this.resync()
    else this.mux.failAll('the bus connection dropped')
  }

  /** Resolves once every projected service's read model is known (the device is ready to answer). */
  async whenReady(timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!this.o.services.every((service) => this.readModel(service) !== undefined)) {
      if (Date.now() > deadline)
        throw new BusUnavailableError(`no state from ${this.o.services.join(', ')} within ${timeoutMs} ms`)
      await sleep(10)
    }
  }

  readModel<S>(service: string): S | undefined {
    return this.connected ? (this.models.get(service)?.state as S | undefined) : undefined
  }

  /**
   * Sends a command whose deadline is `budgetMs` from now: the deadline travels in the envelope,
   * so the service does not start what nobody awaits any more, and the reply is awaited until then.
   */
  async request(
    service: string,
    op: string,
    req: CommandRequest,
    budgetMs: number = DEADLINE_MS.short,
  ): Promise<CommandReply> {
    if (!this.connected) throw new BusUnavailableError('the bus is down')
    const deadline = (this.o.now ?? Date.now)() + budgetMs
    const reply = await this.mux.request(this.subjects.command(service, op), encode({ ...req, deadline }), budgetMs)
    try {
      return decode<CommandReply>(reply)
    } catch (err) {
      throw new BusUnavailableError(`${service}.${op} answered something undecodable`, { cause: err })
    }
  }

  /** Stops following: an owner that stopped must not act on a state change that arrives after. */
  close(): void {
    this.closed = true
    for (const subscription of this.subscriptions) subscription.unsubscribe()
  }

  private accept(event: StateEvent): void {
    if (this.closed || !this.o.services.includes(event.service) || event.state === undefined) return
    const known = this.models.get(event.service)
    if (known && known.boot === event.boot && known.rev >= event.rev) return
    this.models.set(event.service, event)
    this.o.onChange?.(event.service)
  }

  /** Fetches every projected service's current state; retries until each has answered. */
  private async resync(): Promise<void> {
    const epoch = this.epoch
    const pending = new Set(this.o.services)
    for (let attempt = 0; pending.size > 0; attempt++) {
      if (this.closed || epoch !== this.epoch) return
      await Promise.all(
        [...pending].map(async (service) => {
          try {
            const msg = await this.o.nc.request(this.subjects.command(service, 'state'), encode({}), { timeout: 1000 })
            const event = decode<StateEvent>(msg.data)
            if (epoch !== this.epoch) return
            this.accept(event)
            if (event.state !== undefined) pending.delete(service)
          } catch {
            // not up yet: try again below
          }
        }),
      )
      if (pending.size > 0) await sleep(Math.min(1000, 50 * 2 ** Math.min(attempt, 4)))
    }
  }
}
