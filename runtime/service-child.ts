import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { loadFirmware } from '../image/index.js'
import { openHal } from '../hal/index.js'
import { connectBus } from '../bus/index.js'
import { deviceServices, runService, type DeviceService } from './run-service.js'
import type { ServiceChildConfig, ServiceChildMessage } from './split-services.js'

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
  const [config] = (await once(process, 'message')) as [ServiceChildConfig]
  const logger = pino({ level: config.logLevel, base: { svc: name } }, pino.destination(2))
  const send = (message: ServiceChildMessage) => process.send!(message)
  try {
    const firmware = await loadFirmware(fileURLToPath(new URL('..', import.meta.url)))
    const hal = await openHal({
      variant: config.variant,
      dataDir: config.dataDir,
      firmware,
      lock: false,
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
          ...(credentials ? { credentials } : {}),
        })
      },
      ...(config.http ? { http: config.http } : {}),
      ...(config.https ? { https: config.https } : {}),
      ...(config.tls ? { tls: config.tls } : {}),
      ...(config.nbd ? { nbd: config.nbd } : {}),
      ...(config.temperatureRange ? { temperatureRange: config.temperatureRange } : {}),
      ...(config.mirror ? { mirror: { domain: config.mirror.domain } } : {}),
    })
    send({
      type: 'ready',
      ...(service.gateway?.httpPort !== undefined ? { httpPort: service.gateway.httpPort } : {}),
      ...(service.gateway?.httpsPort !== undefined ? { httpsPort: service.gateway.httpsPort } : {}),
    })
    await Promise.race([
      new Promise<void>((resolve) => process.on('message', (m: { type?: string }) => m.type === 'stop' && resolve())),
      once(process, 'disconnect'),
    ])
    await service.stop()
    await hal.close()
    return 0
  } catch (err) {
    logger.error({ err: (err as Error).message }, 'service failed to start')
    send({ type: 'failed', message: (err as Error).message })
    return 1
  } finally {
    // The IPC channel would keep this process alive after its service stopped.
    if (process.connected) process.disconnect()
  }
}
