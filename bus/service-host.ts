import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  BATCH_LIMITS,
  type CommandReply,
  type CommandRequest,
  DEADLINE_MS,
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
import { BatchReplies } from './batch-replies.js'
import { faultOf } from './fault-of.js'
import { BusTimeoutError, BusUnavailableError } from './errors.js'
import { isStorageFull } from '../hal/index.js'
import { processMetrics } from '../metrics/index.js'

const BAD_ENVELOPE = fail(400, 'bad_envelope', 'the command envelope cannot be decoded')
const ENVELOPE_SIZE = fail(400, 'bad_envelope', `an envelope holds 1 to ${BATCH_LIMITS.commands} commands`)
const INTERNAL_ERROR = fail(500, 'internal_error', 'the operation failed')

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
  /**
   * The commands taken and not yet answered, each with how long a stop waits for it: its deadline on the host clock,
   * and never beyond the longest deadline, whatever (or nothing) the sender stamped.
   */
  private readonly running = new Map<Promise<void>, number>()
  private readonly metrics = processMetrics()

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
        else this.dispatch(msg)
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
  reportFault(fault: FaultEventType): void {
    const event: FaultEvent = { service: this.service, fault }
    this.nc.publish(this.subjects.fault(this.service), encode(event))
  }

  get state(): S | undefined {
    return this.current
  }

  async stop(): Promise<void> {
    // Without a bus there is nothing to drain; stop listening all the same.
    await this.subscription?.drain().catch(() => this.subscription?.unsubscribe())
    // The owner closes the connection once this returns: a command begun keeps it open for its reply while its caller
    // still awaits that, no longer. The exclusive ones change the aggregate, which the owner closes next: all of them.
    await Promise.all([...this.running].map(([work, deadline]) => this.within(work, deadline)))
    await this.mailbox.idle()
  }

  private snapshot(): StateEvent<S | undefined> {
    return { service: this.service, rev: this.rev, boot: this.boot, state: this.current }
  }

  private dispatch(msg: Msg): void {
    const op = msg.subject.slice(msg.subject.lastIndexOf('.') + 1)
    let envelope: unknown
    try {
      envelope = decode(msg.data)
    } catch {
      return this.respond(msg, encode(BAD_ENVELOPE))
    }
    this.metrics?.busEnvelopesReceived.inc()
    this.metrics?.busBatchSize.observe(Array.isArray(envelope) ? envelope.length : 1)
    if (!Array.isArray(envelope))
      return this.track(
        envelope,
        this.answer(op, envelope).then((reply) => this.respond(msg, encode(reply))),
      )
    // Refused unread: an envelope of thousands of commands must not take the service's turn.
    if (envelope.length === 0 || envelope.length > BATCH_LIMITS.commands)
      return this.respond(msg, encode(ENVELOPE_SIZE))
    // Taken in order: the exclusive ones queue in the mailbox as they come, the others start now.
    const replies = new BatchReplies(envelope.length, (part) => this.respond(msg, part))
    envelope.forEach((command, index) =>
      this.track(
        command,
        this.answer(op, command).then((reply) => replies.add(index, reply)),
      ),
    )
  }

  /** The reply to one command; never rejects. */
  private async answer(op: string, command: unknown): Promise<unknown> {
    if (op === 'state') return this.snapshot()
    // A name every object inherits (`constructor`, `__proto__`) must not pass for an operation.
    const spec = Object.hasOwn(this.operations, op) ? this.operations[op] : undefined
    if (!spec) return fail(404, 'unknown_operation', `no operation ${op}`)
    if (typeof command !== 'object' || command === null || Array.isArray(command)) return BAD_ENVELOPE
    // A principal is what a service finds in a bearer token it verified itself (actors/host/bearer-guard.ts),
    // never what the sender claims: a claimed one is dropped here, before any operation sees it.
    const { principal: _claimed, ...req } = command as CommandRequest
    try {
      return await this.run(spec, req)
    } catch (err) {
      this.logger.error({ service: this.service, rid: req.rid, err: (err as Error).message }, 'command failed')
      return INTERNAL_ERROR
    }
  }

  /** Keeps `work` (a command until its reply is sent) for a stop to wait for, until the command's deadline. */
  private track(command: unknown, work: Promise<void>): void {
    const longest = this.now() + DEADLINE_MS.long
    const deadline = (command as Partial<CommandRequest> | null)?.deadline
    this.running.set(work, Number.isFinite(deadline) ? Math.min(deadline as number, longest) : longest)
    void work.finally(() => this.running.delete(work))
  }

  /** A reply the connection refuses (one over the bus's max_payload) is lost: its caller learns it by its deadline. */
  private respond(msg: Msg, reply: Uint8Array): void {
    if (!msg.reply) return
    try {
      msg.respond(reply)
    } catch (err) {
      this.logger.warn({ service: this.service, err: (err as Error).message }, 'a reply could not be sent')
    }
  }

  /** Waits for `work` until `deadline` (on the host clock) at most. */
  private async within(work: Promise<void>, deadline: number): Promise<void> {
    const timer = new AbortController()
    const passed = sleep(Math.max(0, deadline - this.now()), undefined, { signal: timer.signal }).catch(() => undefined)
    await Promise.race([work, passed])
    timer.abort()
  }

  private run(spec: OperationSpec, req: CommandRequest): Promise<CommandReply> {
    const execute = async (): Promise<CommandReply> => {
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
        // A machine refused the event in its state (actors/host/event-refused-error.ts, out of bus/'s reach), and its
        // host did not answer that case itself: nothing was journaled or changed, the request does not fit the state.
        if ((err as Error | undefined)?.name === 'EventRefusedError')
          return fail(409, 'conflict', 'The device cannot do this in its current state')
        return INTERNAL_ERROR
      }
    }
    if (spec.exclusive === false) return execute()
    return this.mailbox.run(execute)
  }
}
