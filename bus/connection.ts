import { connect, type NatsConnection } from '@nats-io/transport-node'
import { inboxPrefix } from './services.js'
import type { NatsUserCredentials } from './nats-config.js'

export interface BusConnectOptions {
  servers: string
  service: string
  credentials?: NatsUserCredentials
  /**
   * The device's id, in the connection's reply inbox after the service's prefix: on the fleet backend, where the
   * mirrors of many devices meet, a device's leaf user may read the replies of its own inbox only.
   */
  devid?: string
}

/**
 * A service's own connection to the bus. It never gives up reconnecting: the device must
 * recover by itself when nats-server comes back.
 */
export async function connectBus(o: BusConnectOptions): Promise<NatsConnection> {
  const nc = await connect({
    servers: o.servers,
    name: `hemd-${o.service}`,
    inboxPrefix: o.devid === undefined ? inboxPrefix(o.service) : `${inboxPrefix(o.service)}.${o.devid}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 100,
    pingInterval: 5_000,
    waitOnFirstConnect: true,
    // Each request would otherwise build two Error objects up front just to keep their stack
    // traces: about a tenth of the CPU of an encrypt. A caller is told a timeout, not where it arose.
    noAsyncTraces: true,
    ...(o.credentials ? { user: o.credentials.user, pass: o.credentials.pass } : {}),
  })
  return nc
}

/** Drains a connection (pending work finishes) and falls back to closing it when the bus is gone. */
export async function closeBus(nc: NatsConnection): Promise<void> {
  try {
    await nc.drain()
  } catch {
    await nc.close().catch(() => undefined)
  }
}
