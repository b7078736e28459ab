import { coolDownChecks, type Journal, warmUpChecks } from '../eventstore/index.js'
import { type Hal, openHal, startupTest } from '../hal/index.js'
import {
  callService,
  closeBus,
  connectBus,
  followReadModels,
  type OwnBus,
  readBusAccess,
  ServiceHost,
  startOwnBus,
} from '../bus/index.js'
import type { JournalStatus } from '../actors/host/index.js'
import {
  type CommandReply,
  DEADLINE_MS,
  type IdentityState,
  type MirrorStatus,
  SerialQueue,
  Subjects,
} from '../protocol/index.js'
import { concretePort } from './concrete-port.js'
import { openDeviceJournal } from './device-journal.js'
import type { RunningService, ServiceContext } from './run-service.js'
import { loadTlsFiles } from './tls-files.js'
import { writeSimControl } from './sim-control-file.js'
import { everyStep } from './every-step.js'
import type { Device, DeviceOptions, StartedServices } from './types.js'

/**
 * Boots a whole device: the HAL (holding the data-dir lock), the bus, then the services in
 * order. In one process by default, every service still on its own bus connection and user;
 * with `split`, each service in a child process.
 */
export async function startDevice(o: DeviceOptions): Promise<Device> {
  if (o.diag)
    o.logger.warn(
      { diag: true },
      'DIAG build: /api/diag/* injects faults, dumps the key store and wipes the device without a token; ' +
        'for certification and fault drills only',
    )
  const tls = o.tls ? await loadTlsFiles(o.tls) : undefined
  // The journal's files are checked on threads of their own: the first one starts while the HAL opens.
  if (!o.split) warmUpChecks()
  const hal = await openHal({
    variant: o.variant,
    dataDir: o.dataDir,
    firmware: o.firmware,
    ...o.trust,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.entropy ? { entropy: o.entropy } : {}),
    ...(o.booted ? { booted: o.booted } : {}),
    ...(o.lock === false ? { lock: false } : {}),
  }).catch((err: unknown) => {
    coolDownChecks()
    throw err
  })
  let bus: OwnBus | undefined
  let services: StartedServices | undefined
  // A one-process boot recovers the journal (CPU, about 0.5 s with 100 000 records) while
  // nats-server starts (another process): the first boot's eventstore takes it over.
  let journalOpening = o.split ? undefined : openDeviceJournal(hal, o.firmware.version, o.logger, true)
  // Awaited by the eventstore, or by the clean-up below; never an unhandled rejection meanwhile.
  journalOpening?.catch(() => undefined)
  // The services' code (the actors, the gateway and its schemas: most of the runtime's modules) loads
  // now, while the journal is checked on the other core, rather than before the HAL could open.
  // A failure is thrown where the services start, by the same import.
  void (o.split ? import('./split-services.js') : import('./run-service.js')).catch(() => undefined)
  try {
    const external = o.busDir ? await readBusAccess(o.busDir, hal.devid) : undefined
    // An outside nats-server links to the backend as `hemd bus-config --backend` configured it: the mirror follows.
    const backend = external ? external.backend : o.backend
    bus =
      o.natsUrl || external
        ? undefined
        : await startOwnBus({
            devid: hal.devid,
            runDir: hal.runDir,
            ...(backend ? { backend } : {}),
            onExit: (code, signal) => o.logger.warn({ code, signal }, 'nats-server exited; restarting it'),
          })
    // The bus's per-service users: hemd's own, or those `hemd bus-config` wrote for an outside server (none with
    // --nats).
    const access = external ?? bus
    const natsUrl = o.natsUrl ?? access!.url
    if (hal.faults)
      await writeSimControl(hal.runDir, {
        devid: hal.devid,
        url: natsUrl,
        ...(access ? { credentials: access.credentials.get('simctl')! } : {}),
      })
    // Pinned once, so that clients find the export where it was after a reboot.
    const nbd = o.nbd && hal.disks ? ('port' in o.nbd ? await concretePort(o.nbd) : o.nbd) : undefined
    let endpoints = { http: o.http, https: o.https }
    // The services' options: the mirror needs the per-service users (not --nats), its own being in the account
    // the backend's leaf link is bound to.
    const mirrorTo = access ? backend : undefined
    const serviceOptions: DeviceOptions = { ...o }
    delete serviceOptions.backend
    if (mirrorTo) serviceOptions.backend = mirrorTo
    // A --split service that keeps crashing stops the whole device (set once the device can stop).
    let stopDevice: (() => Promise<void>) | undefined
    let fault: string | undefined
    const giveUp = (service: string) => {
      fault ??= `the ${service} service kept crashing`
      void stopDevice?.()
    }
    const boot = async () => {
      // A reboot is a power-up for the entropy source too: its start-up test runs again.
      startupTest(hal.entropy)
      // Auth reads the whole history next in this process: recovery has every file checked ahead.
      const opened = o.split
        ? undefined
        : (journalOpening ?? openDeviceJournal(hal, o.firmware.version, o.logger, true))
      journalOpening = undefined
      const split = o.split && (await import('./split-services.js'))
      const started = split
        ? await split.startSplitServices(
            { ...serviceOptions, ...endpoints, nbd },
            hal,
            natsUrl,
            access?.credentials,
            tls,
            giveUp,
          )
        : await startInProcess({ ...serviceOptions, ...endpoints, nbd }, hal, natsUrl, access, tls, opened)
      // A reboot must come back where the clients are: pin the ports port 0 picked (the gateway
      // resolves port 0 itself, so that the pinned port can be listened on again: see runGateway).
      endpoints = {
        http: o.http && { host: o.http.host, port: started.httpPort! },
        https: o.https && { host: o.https.host, port: started.httpsPort! },
      }
      return started
    }
    services = await boot()
    let stopped!: () => void
    const whenStopped = new Promise<void>((resolve) => (stopped = resolve))
    let stopping: Promise<void> | undefined
    const restarting = new SerialQueue()
    const restart = () =>
      restarting.run(async () => {
        if (stopping) return
        // Stopped services are never stopped twice, whatever fails after.
        const old = services
        services = undefined
        try {
          await old?.stop()
          await hal.enclave.activateStagedTls()
          services = await boot()
        } catch (err) {
          // A device that cannot come back is down: release the bus and the data dir, and say so.
          o.logger.error({ err: (err as Error).message }, 'the reboot failed: the device stops')
          void stop().catch(() => undefined)
          throw err
        }
      })
    const stop = () =>
      (stopping ??= (async () => {
        await restarting.idle()
        // The data dir is released whatever failed before.
        try {
          await everyStep(
            [() => supervisor.stop(), () => services?.stop(), () => bus?.server.stop(), () => hal.close()],
            (err) => o.logger.error({ err: err.message }, 'stopping the device: a step failed'),
          )
        } finally {
          services = undefined
          stopped()
        }
      })())
    stopDevice = stop
    const upgrade = async () => {
      if (!o.onFirmwareInstalled) {
        o.logger.warn(
          'no bootloader runs this device: it restarts in place, and the new firmware boots at the next start of hemd',
        )
        return restart()
      }
      o.onFirmwareInstalled()
      await stop()
    }
    const supervisor = await startSupervisor(o, hal, natsUrl, access, { restart, stop, upgrade }, !!mirrorTo)
    const trial = hal.boot.trial ? ((await supervisor.confirmTrial()) ? 'confirmed' : 'refused') : undefined
    return {
      variant: hal.variant,
      devid: hal.devid,
      dataDir: o.dataDir,
      httpUrl: endpoints.http && `http://${endpoints.http.host}:${endpoints.http.port}`,
      httpsUrl: endpoints.https && `https://${endpoints.https.host}:${endpoints.https.port}`,
      nbdAddress:
        nbd && ('port' in nbd ? `${nbd.host.includes(':') ? `[${nbd.host}]` : nbd.host}:${nbd.port}` : nbd.path),
      natsUrl,
      get natsPid() {
        return bus?.server.pid
      },
      backend: mirrorTo,
      get mirror() {
        return supervisor.mirror
      },
      get corsOrigin() {
        return supervisor.corsOrigin
      },
      logPublicKey: hal.enclave.logSigner.publicKey,
      get uidSeparation() {
        return services?.uidSeparation
      },
      trial,
      stopped: whenStopped,
      get fault() {
        return fault
      },
      restart,
      stop,
    }
  } catch (err) {
    coolDownChecks()
    await services?.stop().catch(() => undefined)
    // Opened early, and no eventstore took it over.
    await journalOpening?.then((journal) => journal.close()).catch(() => undefined)
    await bus?.server.stop()
    await hal.close()
    throw err
  }
}

/**
 * The supervisor on the bus: actors ask it to reboot (restart every service: new journal
 * file, new session keys, all tokens dead, state rebuilt from the journal) or to shut down.
 * It answers first and acts after, so the HTTP reply to the request goes out before.
 */
async function startSupervisor(
  o: DeviceOptions,
  hal: Hal,
  natsUrl: string,
  bus: Pick<OwnBus, 'credentials'> | undefined,
  device: { restart(): Promise<void>; stop(): Promise<void>; upgrade(): Promise<void> },
  followMirror: boolean,
): Promise<{
  stop(): Promise<void>
  confirmTrial(): Promise<boolean>
  readonly mirror: MirrorStatus | undefined
  readonly corsOrigin: string | undefined
}> {
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

async function startInProcess(
  o: DeviceOptions,
  hal: Hal,
  natsUrl: string,
  bus: Pick<OwnBus, 'credentials'> | undefined,
  tls: { certFile: string; keyFile: string } | undefined,
  journalOpening: Promise<Journal> | undefined,
): Promise<StartedServices> {
  const { deviceServices, mirrorSettings, runService } = await import('./run-service.js')
  const ctx: ServiceContext = {
    hal,
    ...(journalOpening ? { journalOpening } : {}),
    logger: o.logger,
    firmwareVersion: o.firmware.version,
    connect: (service) => {
      const credentials = bus?.credentials.get(service)
      return connectBus({
        servers: natsUrl,
        service,
        devid: hal.devid,
        ...(credentials ? { credentials } : {}),
      })
    },
    ...(o.http ? { http: o.http } : {}),
    ...(o.https ? { https: o.https } : {}),
    ...(tls ? { tls } : {}),
    ...(o.nbd ? { nbd: o.nbd } : {}),
    ...(o.cryptoEngines ? { cryptoEngines: o.cryptoEngines } : {}),
    ...(o.temperatureRange ? { temperatureRange: o.temperatureRange } : {}),
    ...(o.selfTestIntervalMs ? { selfTestIntervalMs: o.selfTestIntervalMs } : {}),
    ...(o.diag ? { diag: true } : {}),
    ...(o.backend ? { mirror: mirrorSettings(o.backend) } : {}),
    ...(o.factoryWebroot ? { factoryWebroot: o.factoryWebroot } : {}),
  }
  const running: RunningService[] = []
  // A service that cannot stop cleanly (its SHUTDOWN record on a full disk) must not keep the others running.
  const stop = () =>
    everyStep(
      running.reverse().map((service) => () => service.stop()),
      (err) => o.logger.error({ err: err.message }, 'stopping a service failed'),
    )
  try {
    for (const name of deviceServices) {
      const service = await runService(name, ctx)
      running.push(service)
      if (service.journal) ctx.journal = service.journal
    }
  } catch (err) {
    await stop().catch(() => undefined)
    throw err
  }
  const gateway = running.at(-1)!.gateway!
  return { httpPort: gateway.httpPort, httpsPort: gateway.httpsPort, stop }
}
