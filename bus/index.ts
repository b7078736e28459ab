// The public face of bus/: what other folders may use of it.
export {
  BUS_CONFIG_FILE,
  BUS_CREDENTIALS_FILE,
  type BusBackend,
  existingBusAccess,
  newBusCredentials,
  readBusAccess,
  writeBusAccess,
  writeBusConfig,
} from './bus-config.js'
export { startOwnBus, type OwnBus } from './bus-setup.js'
export { closeBus, connectBus } from './connection.js'
export { callService } from './call-service.js'
export { BusTimeoutError, BusUnavailableError } from './errors.js'
export { followReadModels } from './follow-read-models.js'
export { METRICS_PERIOD_MS, MetricsSnapshots, publishMetrics } from './metrics-feed.js'
export { orderHealth } from './health-client.js'
export type { NatsUserCredentials } from './nats-config.js'
export { NatsServer } from './nats-server.js'
export { ReadModelBus } from './read-model-bus.js'
export { RequestMux } from './request-mux.js'
export { ServiceHost, type CommandHandler, type OperationSpec } from './service-host.js'
export { inboxPrefix } from './services.js'
export { StreamApi, StreamApiError, type StoredMessage } from './stream-api.js'
// Where a device's journal lives on the fleet backend: all of it is public.
export * from './stream-names.js'
export { orderSupervisor, type SupervisorOrder } from './supervisor-client.js'
export type { GatewayBus } from './types.js'
