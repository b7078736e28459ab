import { coolDownChecks, warmUpChecks } from '../eventstore/index.js'
import { type Hal, openHal } from '../hal/index.js'
import { type OwnBus, readBusAccess, startOwnBus } from '../bus/index.js'
import type { NbdListen } from '../actors/storage/index.js'
import { concretePort } from './concrete-port.js'
import { DeviceLifecycle, type DeviceGround } from './device-lifecycle.js'
import { openDeviceJournal } from './device-journal.js'
import { startSupervisor, type Supervisor } from './supervisor.js'
import { loadTlsFiles } from './tls-files.js'
import { writeSimControl } from './sim-control-file.js'
import type { Device, DeviceOptions } from './types.js'

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
  const hal = await openDeviceHal(o)
  // A one-process boot recovers the journal (CPU, about 0.5 s with 100 000 records) while
  // nats-server starts (another process): the first boot's eventstore takes it over.
  const journalOpening = o.split ? undefined : openDeviceJournal(hal, o.firmware.version, o.logger, true)
  // Awaited by the eventstore, or by the clean-up below; never an unhandled rejection meanwhile.
  journalOpening?.catch(() => undefined)
  // The services' code (the actors, the gateway and its schemas: most of the runtime's modules) loads
  // now, while the journal is checked on the other core, rather than before the HAL could open.
  // A failure is thrown where the services start, by the same import.
  void (o.split ? import('./split-services.js') : import('./run-service.js')).catch(() => undefined)
  let bus: OwnBus | undefined
  let device: DeviceLifecycle | undefined
  try {
    const ground = await reachBus(o, hal, tls)
    bus = ground.bus
    device = new DeviceLifecycle(o, ground, journalOpening)
    await device.boot()
    const supervisor = await startSupervisor(o, hal, ground.natsUrl, ground.access, device, !!ground.mirrorTo)
    device.supervisedBy(supervisor)
    const trial = hal.boot.trial ? ((await supervisor.confirmTrial()) ? 'confirmed' : 'refused') : undefined
    return deviceFace(o, ground, device, supervisor, trial)
  } catch (err) {
    coolDownChecks()
    await (device ? device.abandon() : journalOpening?.then((journal) => journal.close()).catch(() => undefined))
    await bus?.server.stop()
    await hal.close()
    throw err
  }
}

/** The HAL, opened while the journal's first check thread starts (one-process boots). */
function openDeviceHal(o: DeviceOptions): Promise<Hal> {
  // The journal's files are checked on threads of their own: the first one starts while the HAL opens.
  if (!o.split) warmUpChecks()
  return openHal({
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
}

/** What the services run on: hemd's own nats-server started, or the outside one's address and users read. */
async function reachBus(
  o: DeviceOptions,
  hal: Hal,
  tls: DeviceGround['tls'],
): Promise<DeviceGround & { mirrorTo: DeviceOptions['backend'] }> {
  const external = o.busDir ? await readBusAccess(o.busDir, hal.devid) : undefined
  // An outside nats-server links to the backend as `hemd bus-config --backend` configured it: the mirror follows.
  const backend = external ? external.backend : o.backend
  const bus =
    o.natsUrl || external
      ? undefined
      : await startOwnBus({
          devid: hal.devid,
          runDir: hal.runDir,
          ...(backend ? { backend } : {}),
          onExit: (code, signal) => o.logger.warn({ code, signal }, 'nats-server exited; restarting it'),
        })
  const access = external ?? bus
  const natsUrl = o.natsUrl ?? access!.url
  if (hal.faults)
    await writeSimControl(hal.runDir, {
      devid: hal.devid,
      url: natsUrl,
      ...(access ? { credentials: access.credentials.get('simctl')! } : {}),
    })
  // The mirror needs the per-service users (not --nats), its own being in the account the backend's leaf link is
  // bound to.
  const mirrorTo = access ? backend : undefined
  const serviceOptions: DeviceOptions = { ...o }
  delete serviceOptions.backend
  delete serviceOptions.nbd
  if (mirrorTo) serviceOptions.backend = mirrorTo
  // Pinned once, so that clients find the export where it was after a reboot.
  const nbd = o.nbd && hal.disks ? await pinnedNbd(o.nbd) : undefined
  if (nbd) serviceOptions.nbd = nbd
  if (o.metrics) serviceOptions.metrics = await concretePort(o.metrics)
  return { hal, bus, natsUrl, access, tls, serviceOptions, mirrorTo }
}

const pinnedNbd = async (nbd: NbdListen): Promise<NbdListen> => ('port' in nbd ? await concretePort(nbd) : nbd)

/** The device as its caller sees it: where it listens, and what its supervisor last heard. */
function deviceFace(
  o: DeviceOptions,
  ground: DeviceGround & { mirrorTo: DeviceOptions['backend'] },
  device: DeviceLifecycle,
  supervisor: Supervisor,
  trial: Device['trial'],
): Device {
  const { hal, bus, natsUrl } = ground
  const { http, https } = device.endpoints
  const { nbd, metrics } = ground.serviceOptions
  return {
    variant: hal.variant,
    devid: hal.devid,
    dataDir: o.dataDir,
    httpUrl: http && `http://${http.host}:${http.port}`,
    httpsUrl: https && `https://${https.host}:${https.port}`,
    metricsUrl: metrics && `http://${metrics.host.includes(':') ? `[${metrics.host}]` : metrics.host}:${metrics.port}`,
    nbdAddress:
      nbd && ('port' in nbd ? `${nbd.host.includes(':') ? `[${nbd.host}]` : nbd.host}:${nbd.port}` : nbd.path),
    natsUrl,
    get natsPid() {
      return bus?.server.pid
    },
    backend: ground.mirrorTo,
    get mirror() {
      return supervisor.mirror
    },
    get corsOrigin() {
      return supervisor.corsOrigin
    },
    logPublicKey: hal.enclave.logSigner.publicKey,
    get tlsCertificate() {
      return https && (ground.tls ?? hal.enclave.tlsCredentials()).certDer
    },
    get uidSeparation() {
      return device.services?.uidSeparation
    },
    trial,
    stopped: device.stopped,
    get fault() {
      return device.fault
    },
    restart: device.restart,
    stop: device.stop,
  }
}
