import type { NatsConnection } from '@nats-io/transport-node'
import type { JournalEntry, JournalPosition } from '../../eventstore/types.js'
import { decode, encode } from '../bus/codec.js'
import { BusUnavailableError } from '../bus/errors.js'
import { Subjects } from '../bus/subjects.js'
import type { CommandReply } from '../bus/types.js'
import type { JournalPort, JournalStatus } from '../host/journal-port.js'

/** The journal of a device whose eventstore runs in another process (`--split`). */
export class RemoteJournal implements JournalPort {
  private readonly subjects: Subjects

  constructor(
    private readonly nc: NatsConnection,
    devid: string,
    private readonly timeoutMs = 10_000,
  ) {
    this.subjects = new Subjects(devid)
  }

  append(entries: JournalEntry[]): Promise<JournalPosition[]> {
    return this.call<JournalPosition[]>('append', { entries })
  }

  status(): Promise<JournalStatus> {
    return this.call<JournalStatus>('status', undefined)
  }

  private async call<T>(op: string, body: unknown): Promise<T> {
    let reply: CommandReply<T>
    try {
      const msg = await this.nc.request(this.subjects.command('eventstore', op), encode({ rid: 'journal', tls: false, body }), {
        timeout: this.timeoutMs,
      })
      reply = decode<CommandReply<T>>(msg.data)
    } catch (err) {
      throw new BusUnavailableError(`the journal did not answer ${op}`, { cause: err })
    }
    if (reply.status !== 200) throw new Error(`the journal refused ${op} (${reply.status})`)
    return reply.body as T
  }
}
