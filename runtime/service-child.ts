import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { loadFirmware } from '../image/index.js'
import { decodeTrustAnchors, openHal } from '../hal/index.js'
import { connectBus } from '../bus/index.js'
import { deviceServices, mirrorSettings, runService, type DeviceService } from './run-service.js'
import type { ServiceChildConfig, ServiceChildMessage } from './service-child-config.js'

/**
 * One service of a `--split` device, in its own process. The supervisor holds the device lock
 * and sends the configuration over IPC; when the supervisor goes away, so does this process.
 */
export async function runServiceChild(name: string): Promise<number> {
  if (!process.send || !(deviceServices as readonly string[]).includes(name)) {
    process.stderr.write(`hemd: --service ${name} is internal to --split\n`)
    return 2
  }
  // Ctrl-C reaches the whole process group; the supervisor decides the stop order.
  process.on('SIGINT', () => undefined)
  // What it creates is never for others; its group (the services that share it, with uid separation) may use it.
  process.umask(0o007)
  const orphaned = whenOrphaned()
  const [config] = (await once(process, 'message')) as [ServiceChildConfig]
  const logger = pino({ level: config.logLevel, base: { svc: name } }, pino.destination(2))
  const send = (message: ServiceChildMessage) => process.send!(message)
  try {
    const trust = decodeTrustAnchors(config.trust)
    const firmware = await loadFirmware(fileURLToPath(new URL('..', import.meta.url)), trust.vendorKey)
    const hal = await openHal({
      variant: config.variant,
      dataDir: config.dataDir,
      firmware,
      ...trust,
      lock: false,
      // The gateway faces the network: it opens nothing of the enclave, the journal, the keys or the disks.
      ...(name === 'gateway' ? { front: true } : {}),
      ...(config.booted ? { booted: config.booted } : {}),
    })
    const service = await runService(name as DeviceService, {
      hal,
      logger,
      firmwareVersion: firmware.version,
      connect: (svc) => {
        const credentials = svc === 'mirror' ? config.mirror?.credentials : config.credentials
        return connectBus({
          servers: config.natsUrl,
          service: svc,
          devid: hal.devid,
          ...(credentials ? { credentials } : {}),
        })
      },
      ...(config.http ? { http: config.http } : {}),
      ...(config.https ? { https: config.https } : {}),
      ...(config.tls ? { tls: config.tls } : {}),
      ...(config.nbd ? { nbd: config.nbd } : {}),
      ...(config.temperatureRange ? { temperatureRange: config.temperatureRange } : {}),
      ...(config.diag ? { diag: true } : {}),
      ...(config.factoryWebroot ? { factoryWebroot: config.factoryWebroot } : {}),
      ...(config.appCloud ? { appCloud: config.appCloud } : {}),
      ...(config.metrics ? { metrics: config.metrics } : {}),
      split: true,
      ...(config.mirror ? { mirror: mirrorSettings(config.mirror) } : {}),
    })
    send({
      type: 'ready',
      ...(service.gateway?.httpPort !== undefined ? { httpPort: service.gateway.httpPort } : {}),
      ...(service.gateway?.httpsPort !== undefined ? { httpsPort: service.gateway.httpsPort } : {}),
    })
    await Promise.race([
      new Promise<void>((resolve) => process.on('message', (m: { type?: string }) => m.type === 'stop' && resolve())),
      orphaned,
    ])
    await service.stop()
    await hal.close()
    return 0
  } catch (err) {
    logger.error({ err: (err as Error).message }, 'service failed to start')
    if (process.connected) send({ type: 'failed', message: (err as Error).message })
    return 1
  } finally {
    // The IPC channel would keep this process alive after its service stopped.
    if (process.connected) {
      leaving = true
      process.disconnect()
    }
  }
}

/** How long an orphaned service may take to stop cleanly before it exits anyway. */
const ORPHAN_GRACE_MS = 5_000
/** Set when this process closes the IPC channel itself, its service stopped. */
let leaving = false

/**
 * Resolves when the supervisor is gone: the IPC channel closes when it dies, even by SIGKILL.
 * The process then exits within ORPHAN_GRACE_MS whatever it is doing (waiting for its
 * configuration, starting, or stopping on a bus that died with the supervisor), so that no
 * service runs on as an orphan. setpriv's parent-death signal, where present, is quicker still.
 */
function whenOrphaned(): Promise<void> {
  return new Promise((resolve) => {
    process.once('disconnect', () => {
      if (!leaving) setTimeout(() => process.exit(1), ORPHAN_GRACE_MS).unref()
      resolve()
    })
  })
}
