import type { NatsConnection, Subscription } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import {
  decode,
  FAULT_EVENTS,
  type FaultEvent,
  type FaultEventType,
  type IdentityState,
  type KeystoreState,
  type MirrorStatus,
  Subjects,
} from '../../protocol/index.js'
import type { JournalStatus } from '../host/index.js'
import { followReadModels, type ReadModelBus } from '../../bus/index.js'
import type { FaultReport } from './health-monitor.js'

export interface FaultFollowerOptions {
  nc: NatsConnection
  devid: string
  logger: Logger
  report(fault: FaultReport): Promise<void>
  /** The eventstore's read model changed: the journal mirror's state, which status shows. */
  onMirror?: () => void
}

const FAULT_OF_BIT = new Map(Object.entries(FAULT_EVENTS).map(([fault, bit]) => [bit, fault as FaultEventType]))

/**
 * Faults the other services find, for the health machine: the keystore's (its engine's KATs,
 * its repository, its entropy draws with `--split`), a journal history that does not verify
 * (auth rebuilt the identity from it), a journal the fleet mirror found gone back behind its
 * stream, and any service's stack overflow or allocation failure.
 */
export class FaultFollower {
  private readonly models: ReadModelBus
  private subscription: Subscription | undefined

  constructor(private readonly o: FaultFollowerOptions) {
    this.models = followReadModels(
      o.nc,
      o.devid,
      'system',
      ['auth', 'keystore', 'eventstore'],
      o.logger,
      (service) => void this.follow(service),
    )
  }

  /**
   * The identity as the auth service publishes it: its token key checks the bearer tokens of the system's operations.
   */
  get identity(): IdentityState | undefined {
    return this.models.readModel<IdentityState>('auth')
  }

  /** The journal mirror's state, as the eventstore publishes it (no fault: the device serves on). */
  get mirror(): MirrorStatus | undefined {
    return this.models.readModel<JournalStatus>('eventstore')?.mirror
  }

  /** The crypto engine the keystore chose at boot; the self-test checks that one. */
  get engine(): string | undefined {
    return this.models.readModel<KeystoreState>('keystore')?.engine
  }

  start(): void {
    this.subscription = this.o.nc.subscribe(new Subjects(this.o.devid).fault('*'), {
      callback: (err, msg) => {
        if (err) return
        try {
          const event = decode<FaultEvent>(msg.data)
          if (Object.hasOwn(FAULT_EVENTS, event.fault))
            this.raise({
              fault: event.fault,
              // The subject, which only that service may publish on (the bus permissions), not what it says it is.
              source: serviceOf(msg.subject),
              ...(event.detail ? { detail: event.detail } : {}),
            })
        } catch (e) {
          this.o.logger.warn({ err: (e as Error).message }, 'undecodable fault event')
        }
      },
    })
  }

  close(): void {
    this.models.close()
    this.subscription?.unsubscribe()
  }

  private follow(service: string): void {
    if (service === 'eventstore') {
      const mirror = this.mirror
      // The one mirror state that is a fault: the journal went back behind what it sent the backend.
      if (mirror?.state === 'rollback')
        this.raise({ fault: 'INTEGRITY_FAILED', source: 'mirror', detail: { stream: mirror.stream } })
      this.o.onMirror?.()
      return
    }
    if (service === 'auth') {
      if (this.models.readModel<IdentityState>('auth')?.intact === false)
        this.raise({ fault: 'INTEGRITY_FAILED', source: 'journal-history' })
      return
    }
    const keystore = this.models.readModel<KeystoreState>('keystore')
    if (!keystore) return
    for (const [bit, fault] of FAULT_OF_BIT) {
      if ((keystore.fls & bit) !== 0) {
        this.raise({
          fault,
          source: 'keystore',
          detail: { engine: keystore.engine, ...(fault === 'KAT_FAILED' ? { failed: keystore.kat_failed ?? [] } : {}) },
        })
      }
    }
  }

  private raise(report: FaultReport): void {
    this.o
      .report(report)
      .catch((err: Error) =>
        this.o.logger.error({ err: err.message, fault: report.fault }, 'a fault could not be journaled'),
      )
  }
}

/** The service of a fault subject, `hem.<devid>.evt.<service>.fault`. */
function serviceOf(subject: string): string {
  return subject.split('.')[3] ?? ''
}
