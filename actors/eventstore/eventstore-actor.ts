import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import type { Journal } from '../../eventstore/index.js'
import type { JournalEntry, MirrorStatus } from '../../protocol/index.js'
import { ServiceHost } from '../../bus/index.js'
import type { JournalPort, JournalStatus } from '../host/index.js'

/** The journal's single writer, reachable on the bus for actors in other processes. */
export class EventstoreActor {
  readonly port: JournalPort
  private readonly host: ServiceHost<JournalStatus>

  constructor(nc: NatsConnection, devid: string, journal: Journal, logger: Logger) {
    this.port = localJournal(journal)
    this.host = new ServiceHost<JournalStatus>(
      nc,
      devid,
      'eventstore',
      {
        append: {
          exclusive: false,
          handler: async (req) => {
            const entries = (req.body as { entries?: JournalEntry[] } | undefined)?.entries
            if (!Array.isArray(entries))
              return { status: 400, body: { error: 'bad_request', message: 'entries missing' } }
            return { status: 200, body: await journal.append(entries) }
          },
        },
        status: { handler: async () => ({ status: 200, body: await this.port.status() }) },
        head: { handler: async () => ({ status: 200, body: await this.port.head() }) },
      },
      logger,
    )
  }

  async start(): Promise<void> {
    this.host.start()
    this.host.publishState(await this.port.status())
  }

  stop(): Promise<void> {
    return this.host.stop()
  }

  /** The journal mirror's new state, for the system service's status (the mirror runs beside the journal). */
  mirrorChanged(mirror: MirrorStatus): void {
    const state = this.host.state
    if (state) this.host.publishState({ ...state, mirror })
  }
}

export function localJournal(journal: Journal): JournalPort {
  return {
    append: (entries) => journal.append(entries),
    status: async () => {
      const { intact, anchorMigrated } = journal.recovery
      return { fileId: journal.fileId, intact, ...(anchorMigrated ? { anchorMigrated } : {}) }
    },
    head: async () => journal.signedHead(),
  }
}
