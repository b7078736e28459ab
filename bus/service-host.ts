import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { randomBytes } from 'node:crypto'
import {
  type CommandReply,
  type CommandRequest,
  deadlinePassed,
  decode,
  encode,
  fail,
  type FaultEvent,
  type FaultEventType,
  SerialQueue,
  type StateEvent,
  Subjects,
  TIMEOUT_ERROR,
} from '../protocol/index.js'
import { faultOf } from './fault-of.js'
import { BusTimeoutError, BusUnavailableError } from './errors.js'
import { isStorageFull } from '../hal/index.js'

export type CommandHandler = (req: CommandRequest) => Promise<CommandReply> | CommandReply

export interface OperationSpec {
  handler: CommandHandler
  /**
   * Exclusive operations run one at a time in arrival order (they change the aggregate);
   * the others may overlap, e.g. so that their journal appends share one group commit.
   */
  exclusive?: boolean
}

/** Hosts one long-lived actor on the bus: its commands in, its state events out. */
export class ServiceHost<S> {
  private readonly subjects: Subjects
  private readonly boot = randomBytes(8).toString('hex')
  private subscription: Subscription | undefined
  private readonly mailbox = new SerialQueue()
  private rev = 0
  private current: S | undefined

  constructor(
    private readonly nc: NatsConnection,
    devid: string,
    readonly service: string,
    private readonly operations: Readonly<Record<string, OperationSpec>>,
    private readonly logger: Logger,
    /** The host clock that command deadlines are read on; tests inject one. */
    private readonly now: () => number = Date.now,
  ) {
    this.subjects = new Subjects(devid)
  }

  start(): void {
    this.subscription = this.nc.subscribe(this.subjects.commands(this.service), {
      callback: (err, msg) => {
        if (err) this.logger.error({ err: err.message, service: this.service }, 'command subscription failed')
        else void this.dispatch(msg)
      },
    })
  }

  /** Replaces the read model and announces it; the gateway's projections follow. */
  publishState(state: S): void {
    this.current = state
    this.rev += 1
    this.nc.publish(this.subjects.state(this.service), encode(this.snapshot()))
  }

  /** Tells the health machine (system service) of a fault found in this service. */
  reportFault(fault: FaultEventType, detail?: Record<string, unknown>): void {
    const event: FaultEvent = { service: this.service, fault, ...(detail ? { detail } : {}) }
    this.nc.publish(this.subjects.fault(this.service), encode(event))
  }

  get state(): S | undefined {
    return this.current
  }

  async stop(): Promise<void> {
    // Without a bus there is nothing to drain; stop listening all the same.
    await this.subscription?.drain().catch(() => this.subscription?.unsubscribe())
    await this.mailbox.idle()
  }

  private snapshot(): StateEvent<S | undefined> {
    return { service: this.service, rev: this.rev, boot: this.boot, state: this.current }
  }

  private async dispatch(msg: Msg): Promise<void> {
    const op = msg.subject.slice(msg.subject.lastIndexOf('.') + 1)
    if (op === 'state') {
      msg.respond(encode(this.snapshot()))
      return
    }
    const spec = this.operations[op]
    const reply: CommandReply = spec
      ? await this.run(spec, msg)
      : { status: 404, body: { error: 'unknown_operation', message: `no operation ${op}` } }
    if (msg.reply) msg.respond(encode(reply))
  }

  private run(spec: OperationSpec, msg: Msg): Promise<CommandReply> {
    const execute = async (): Promise<CommandReply> => {
      let req: CommandRequest
      try {
        // A principal is what a service finds in a bearer token it verified itself (actors/host/bearer-guard.ts),
        // never what the sender claims: a claimed one is dropped here, before any operation sees it.
        const { principal: _claimed, ...sent } = decode<CommandRequest>(msg.data)
        req = sent
      } catch {
        return { status: 400, body: { error: 'bad_envelope', message: 'the command envelope cannot be decoded' } }
      }
      // Checked when its turn comes, not on arrival: an exclusive command may wait behind a slow one.
      // Nobody awaits its answer any more, so it is not begun; one that has begun runs to its end.
      if (deadlinePassed(req.deadline, this.now())) {
        this.logger.warn({ service: this.service, rid: req.rid }, 'command not started: its deadline had passed')
        return fail(504, TIMEOUT_ERROR.error, 'The operation was not started: its deadline had passed')
      }
      try {
        return await spec.handler(req)
      } catch (err) {
        this.logger.error({ service: this.service, rid: req.rid, err: (err as Error).message }, 'command failed')
        // A full disk is the device's condition, not a fault of the request: 507, as the upgrade actor answers it.
        if (isStorageFull(err))
          return fail(507, 'no_space', 'The device has no room left to store this; try again once space is freed')
        const fault = faultOf(err)
        if (fault) this.reportFault(fault)
        if (fault === 'ENTROPY_FAILED')
          return fail(409, 'device_fault', 'The device is in a fail state (see fls_state in status)')
        // The journal (or another service) out of reach: nothing was acknowledged, so the caller may try again.
        if (err instanceof BusUnavailableError)
          return fail(503, 'bus_unavailable', 'A device service is not reachable; try again')
        // Another service took this one's request but answered too late: slow, not out of reach.
        if (err instanceof BusTimeoutError) return fail(504, TIMEOUT_ERROR.error, TIMEOUT_ERROR.message)
        return { status: 500, body: { error: 'internal_error', message: 'the operation failed' } }
      }
    }
    if (spec.exclusive === false) return execute()
    return this.mailbox.run(execute)
  }
}
