export { startGateway } from './start-gateway.js'
export { DeviceMetrics, type MetricsFeed } from './device-metrics.js'
export { type MetricsListener, startMetricsListener } from './metrics-listener.js'
export { BusTimeoutError, BusUnavailableError, HttpError, ListenError } from './errors.js'
export { routeTable } from './routes.js'
export { IdentityTokens } from './identity-tokens.js'
export { scopeAudit } from './scope-audit.js'
export { scopeSatisfies } from '../protocol/index.js'
export { deviceFailState, gatewayProjections, type DeviceView } from './device-view.js'
export type {
  AuthMode,
  Gateway,
  GatewayOptions,
  Method,
  ReadContext,
  Route,
  RouteHandler,
  TokenVerifier,
} from './types.js'
export type { GatewayBus } from '../bus/index.js'
export type { Role } from '../protocol/index.js'
export { BODY_LIMIT, readBody } from './body.js'
export { openApiDocument } from './openapi.js'
export { cloudOrigin } from './static-site.js'
export { compress } from './compress.js'
