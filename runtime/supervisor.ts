import { callService, closeBus, connectBus, followReadModels, type OwnBus, ServiceHost } from '../bus/index.js'
import type { JournalStatus } from '../actors/host/index.js'
import type { Hal } from '../hal/index.js'
import { DEADLINE_MS, type IdentityState, type MirrorStatus, Subjects } from '../protocol/index.js'
import type { DeviceOptions } from './types.js'

/** The supervisor as the device sees it: the read models it follows, and the trial it confirms. */
export interface Supervisor {
  stop(): Promise<void>
  confirmTrial(): Promise<boolean>
  readonly mirror: MirrorStatus | undefined
  readonly corsOrigin: string | undefined
}

/**
 * The supervisor on the bus: actors ask it to reboot (restart every service: new journal
 * file, new session keys, all tokens dead, state rebuilt from the journal) or to shut down.
 * It answers first and acts after, so the HTTP reply to the request goes out before.
 */
export async function startSupervisor(
  o: DeviceOptions,
  hal: Hal,
  natsUrl: string,
  bus: Pick<OwnBus, 'credentials'> | undefined,
  device: { restart(): Promise<void>; stop(): Promise<void>; upgrade(): Promise<void> },
  followMirror: boolean,
): Promise<Supervisor> {
  const credentials = bus?.credentials.get('supervisor')
  const nc = await connectBus({ servers: natsUrl, service: 'supervisor', ...(credentials ? { credentials } : {}) })
  // The mirror runs beside the journal (in the eventstore's process): its state is in the eventstore's read model.
  // The identity's names the CORS origin, for hemd's banner.
  const followed = followMirror ? ['auth', 'eventstore'] : ['auth']
  const models = followReadModels(nc, hal.devid, 'supervisor', followed, o.logger)
  const later = (what: string, action: () => Promise<void>) => () => {
    setTimeout(() => action().catch((err: Error) => o.logger.error({ err: err.message }, `${what} failed`)), 20)
    return { status: 200 }
  }
  const host = new ServiceHost(
    nc,
    hal.devid,
    'supervisor',
    {
      reboot: { handler: later('reboot', device.restart) },
      shutdown: { handler: later('shutdown', device.stop) },
      upgrade: { handler: later('the upgrade reboot', device.upgrade) },
    },
    o.logger,
  )
  host.start()
  return {
    stop: async () => {
      models.close()
      await host.stop()
      await closeBus(nc)
    },
    get mirror() {
      return models.readModel<JournalStatus>('eventstore')?.mirror
    },
    get corsOrigin() {
      return models.readModel<IdentityState>('auth')?.transport.origin
    },
    /** A trial boot of new firmware is kept only if the upgrade service confirms the device healthy. */
    confirmTrial: async () => {
      try {
        // The new runtime checks its own health first: a self-test's worth of work.
        const reply = await callService(
          nc,
          new Subjects(hal.devid).command('upgrade', 'confirm'),
          { rid: 'boot', tls: false },
          DEADLINE_MS.medium,
          'the upgrade service did not confirm',
        )
        if (reply.status !== 200)
          o.logger.error({ status: reply.status, body: reply.body }, 'the new firmware did not confirm its health')
        return reply.status === 200
      } catch (err) {
        o.logger.error({ err: (err as Error).message }, 'the new firmware could not confirm its health')
        return false
      }
    },
  }
}
