import { connectBus, type OwnBus } from '../bus/index.js'
import type { Journal } from '../eventstore/index.js'
import type { Hal } from '../hal/index.js'
import { everyStep } from './every-step.js'
import type { RunningService, ServiceContext } from './run-service.js'
import type { DeviceOptions, StartedServices } from './types.js'

/** Starts every service in this process, in order, each on its own bus connection and user. */
export async function startInProcess(
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
    ...(o.appCloud ? { appCloud: o.appCloud } : {}),
    ...(o.metrics ? { metrics: o.metrics } : {}),
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
