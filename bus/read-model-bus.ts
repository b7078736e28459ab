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
  /**
   * Answer a read model only while it is known to be current, as the gateway must (it cannot vouch for a projection
   * that may have missed events): none while the connection is down, nor after a reconnect until read again. Without
   * it a service keeps acting on the last state it knows meanwhile: one that forgot it would act on half of what it
   * follows (the storage service would close its disks for want of the identity, were the fail state read first).
   */
  currentOnly?: boolean
}

/**
 * A view of the bus: projections of the actors' state events (so reads cost no round trip) and
 * commands as request/reply. While the connection is down commands are refused; after a
 * reconnect every projection is read again, since an event may have been missed meanwhile.
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
        o.nc.subscribe(this.subjects.state(service), {
          callback: (err, msg) => {
            if (err) return
            try {
              this.accept(service, decode<StateEvent>(msg.data))
            } catch (e) {
              o.logger.warn({ err: (e as Error).message }, 'undecodable state event')
            }
          },
        }),
      )
    }
    void this.resync()
    void this.followConnection()
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
    if (this.o.currentOnly && !this.connected) return undefined
    return this.models.get(service)?.state as S | undefined
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
    return (await this.mux.request(
      this.subjects.command(service, op),
      encode({ ...req, deadline }),
      budgetMs,
    )) as CommandReply
  }

  /** Stops following: an owner that stopped must not act on a state change that arrives after. */
  close(): void {
    this.closed = true
    for (const subscription of this.subscriptions) subscription.unsubscribe()
  }

  private async followConnection(): Promise<void> {
    for await (const status of this.o.nc.status()) {
      if (this.closed) return
      if (status.type === 'disconnect') this.setConnected(false)
      else if (status.type === 'reconnect') this.setConnected(true)
    }
  }

  private setConnected(connected: boolean): void {
    this.connected = connected
    this.epoch += 1
    if (this.o.currentOnly) this.models.clear()
    // The mux fails what waits on its own connection's drop.
    if (connected) void this.resync()
  }

  /**
   * Takes `service`'s state: the service whose subject the event arrived on, or that was asked for it. Never the one
   * the payload names: the bus lets each service publish on its own subjects only, and a payload naming another (the
   * identity, with a token key of its own making) is what a compromised service would send; it is dropped.
   * True once `service`'s state is known, this one or a newer.
   */
  private accept(service: string, event: StateEvent): boolean {
    if (this.closed) return false
    if (event.service !== service) {
      this.o.logger.warn({ service }, 'a state event naming another service than its subject: dropped')
      return false
    }
    if (event.state === undefined) return false
    const known = this.models.get(service)
    if (known && known.boot === event.boot && known.rev >= event.rev) return true
    this.models.set(service, event)
    this.o.onChange?.(service)
    return true
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
            if (epoch !== this.epoch) return
            if (this.accept(service, decode<StateEvent>(msg.data))) pending.delete(service)
          } catch {
            // not up yet: try again below
          }
        }),
      )
      if (pending.size > 0) await sleep(Math.min(1000, 50 * 2 ** Math.min(attempt, 4)))
    }
  }
}
