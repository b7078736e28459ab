import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { ReadModelBus } from './read-model-bus.js'
import { inboxPrefix } from './services.js'

/** The read models of `services` as `service` follows them, over its connection and its own reply inbox. */
export function followReadModels(
  nc: NatsConnection,
  devid: string,
  service: string,
  services: readonly string[],
  logger: Logger,
  onChange?: (service: string) => void,
): ReadModelBus {
  return new ReadModelBus({ nc, devid, services, inboxPrefix: inboxPrefix(service), logger, onChange })
}
