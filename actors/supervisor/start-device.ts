import { openHal } from '../../hal/index.js'
import type { Hal } from '../../hal/types.js'
import { connectBus } from '../bus/connection.js'
import { startOwnBus, type OwnBus } from './bus-setup.js'
import { deviceServices, runService, type RunningService, type ServiceContext } from './run-service.js'
import { startSplitServices } from './split-services.js'
import { loadTlsFiles } from './tls-files.js'
import type { Device, DeviceOptions } from './types.js'

/**
 * Boots a whole device: the HAL (holding the data-dir lock), the bus, then the services in
 * order. In one process by default, every service still on its own bus connection and user;
 * with `split`, each service in a child process.
 */
export async function startDevice(o: DeviceOptions): Promise<Device> {
  const tls = o.tls ? await loadTlsFiles(o.tls) : undefined
  const hal = await openHal({
    variant: o.variant,
    dataDir: o.dataDir,
    firmware: o.firmware,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.entropy ? { entropy: o.entropy } : {}),
  })
  let bus: OwnBus | undefined
  try {
    bus = o.natsUrl
      ? undefined
      : await startOwnBus({
          devid: hal.devid,
          runDir: hal.runDir,
          onExit: (code, signal) => o.logger.warn({ code, signal }, 'nats-server exited; restarting it'),
        })
    const natsUrl = o.natsUrl ?? bus!.url
    const services = o.split
      ? await startSplitServices(o, hal, natsUrl, bus?.credentials, tls)
      : await startInProcess(o, hal, natsUrl, bus, tls)
    let stopping: Promise<void> | undefined
    const stop = async () => {
      await services.stop()
      await bus?.server.stop()
      await hal.close()
    }
    return {
      variant: hal.variant,
      devid: hal.devid,
      dataDir: o.dataDir,
      httpUrl: services.httpPort === undefined ? undefined : `http://${o.http!.host}:${services.httpPort}`,
      httpsUrl: services.httpsPort === undefined ? undefined : `https://${o.https!.host}:${services.httpsPort}`,
      natsUrl,
      get natsPid() {
        return bus?.server.pid
      },
      logPublicKey: hal.enclave.logSigner.publicKey,
      stop: () => (stopping ??= stop()),
    }
  } catch (err) {
    await bus?.server.stop()
    await hal.close()
    throw err
  }
}

export interface StartedServices {
  httpPort: number | undefined
  httpsPort: number | undefined
  /** Stops the services in reverse start order. */
  stop(): Promise<void>
}

async function startInProcess(
  o: DeviceOptions,
  hal: Hal,
  natsUrl: string,
  bus: OwnBus | undefined,
  tls: { certFile: string; keyFile: string } | undefined,
): Promise<StartedServices> {
  const ctx: ServiceContext = {
    hal,
    logger: o.logger,
    firmwareVersion: o.firmware.version,
    connect: (service, onConnectionChange) => {
      const credentials = bus?.credentials.get(service)
      return connectBus({
        servers: natsUrl,
        service,
        ...(credentials ? { credentials } : {}),
        ...(onConnectionChange ? { onConnectionChange } : {}),
      })
    },
    ...(o.http ? { http: o.http } : {}),
    ...(o.https ? { https: o.https } : {}),
    ...(tls ? { tls } : {}),
  }
  const running: RunningService[] = []
  const stop = async () => {
    for (const service of running.reverse()) await service.stop()
  }
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
