import type { NatsConnection } from '@nats-io/transport-node'
import { setTimeout as sleep } from 'node:timers/promises'
import { JournalWriteError } from '../../eventstore/index.js'
import { StorageFullError } from '../../hal/index.js'
import {
  type CommandReply,
  DEADLINE_MS,
  encode,
  type JournalEntry,
  type JournalPosition,
  type SignedHead,
  Subjects,
} from '../../protocol/index.js'
import { BusUnavailableError, RequestMux } from '../../bus/index.js'
import type { JournalPort, JournalStatus } from '../host/index.js'

/** How long to wait before asking a journal that had no responder again. */
const RESUBSCRIBE_POLL_MS = 20

/** The journal of a device whose eventstore runs in another process (`--split`). */
export class RemoteJournal implements JournalPort {
  private readonly subjects: Subjects
  /** The appends of one turn (the commands of one envelope, say) reach the eventstore as one message. */
  private readonly mux: RequestMux

  constructor(
    nc: NatsConnection,
    devid: string,
    /** The connection's own reply inbox prefix (bus `inboxPrefix`). */
    inboxPrefix: string,
    /**
     * An append is a step of an operation already under way, which must run to its end where it
     * can: it gets the longest budget, and a slow journal is told apart from a missing one.
     */
    private readonly timeoutMs = DEADLINE_MS.long,
  ) {
    this.subjects = new Subjects(devid)
    this.mux = new RequestMux(nc, inboxPrefix)
  }

  append(entries: JournalEntry[]): Promise<JournalPosition[]> {
    return this.call<JournalPosition[]>('append', { entries })
  }

  status(): Promise<JournalStatus> {
    return this.call<JournalStatus>('status', undefined)
  }

  head(): Promise<SignedHead> {
    return this.call<SignedHead>('head', undefined)
  }

  /**
   * One request to the eventstore, asked again while it has no responder: after a bus outage
   * each process resubscribes on its own reconnect, and a service may be back (and have run a
   * command) a moment before the eventstore is; failing then would fail an operation the journal
   * takes a few milliseconds later. Only "no responder" is asked again: such a request reached
   * no eventstore, so it cannot be appended twice.
   */
  private async call<T>(op: string, body: unknown): Promise<T> {
    const deadline = Date.now() + this.timeoutMs
    const payload = encode({ rid: 'journal', tls: false, body, deadline })
    let reply: CommandReply<T>
    for (;;) {
      try {
        const subject = this.subjects.command('eventstore', op)
        reply = (await this.mux.request(subject, payload, Math.max(1, deadline - Date.now()))) as CommandReply<T>
        break
      } catch (err) {
        if (!(err instanceof BusUnavailableError && err.noResponder) || Date.now() + RESUBSCRIBE_POLL_MS >= deadline)
          throw err
        await sleep(RESUBSCRIBE_POLL_MS)
      }
    }
    // The eventstore's full disk, across the bus: the failed write a local journal reports, with its cause.
    if (reply.status === 507)
      throw new JournalWriteError(`the journal could not ${op}: no space`, {
        cause: new StorageFullError('the data disk is full'),
      })
    if (reply.status !== 200) throw new Error(`the journal refused ${op} (${reply.status})`)
    return reply.body as T
  }
}
