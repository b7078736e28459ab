import uWS, { type TemplatedApp, type us_listen_socket } from 'uWebSockets.js'
import { Dispatcher } from './dispatch.js'
import { ListenError } from './errors.js'
import type { Gateway, GatewayOptions } from './types.js'
import { listenerOrigins } from './listener-origins.js'

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

/** uWS's `ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT` (a const enum in its typings, so not importable as a value). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1

/** `listen(host, port, options, cb)` exists at run time but is missing from uWS's typings. */
interface ExclusiveListen {
  listen(host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void): void
}

interface Listener {
  // `close()` (drop every connection) exists at run time but is missing from uWS's typings.
  app: TemplatedApp & { close(): void }
  socket: us_listen_socket
  port: number
}

/** Starts the HTTP and/or HTTPS listeners (port 0 picks a free port); both share one dispatcher. */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const dispatcher = new Dispatcher(options)
  const listeners: Listener[] = []
  const stop = (): void => {
    for (const l of listeners) uWS.us_listen_socket_close(l.socket)
  }
  let http: Listener | undefined
  let https: Listener | undefined
  try {
    if (options.http) {
      http = await listen(uWS.App(), options.http, false, dispatcher)
      listeners.push(http)
    }
    if (options.https) {
      https = await listen(tlsApp(options.https), options.https, true, dispatcher)
      listeners.push(https)
    }
  } catch (error) {
    stop()
    for (const l of listeners) l.app.close()
    throw error
  }
  options.logger.info({ httpPort: http?.port, httpsPort: https?.port }, 'gateway listening')
  let closing: Promise<void> | undefined
  return {
    ...(http ? { httpPort: http.port } : {}),
    ...(https ? { httpsPort: https.port } : {}),
    close() {
      closing ??= (async () => {
        stop()
        await dispatcher.idle()
        for (const l of listeners) l.app.close()
      })()
      return closing
    },
  }
}

function tlsApp({ certFile, keyFile }: { certFile: string; keyFile: string }): TemplatedApp {
  try {
    return uWS.SSLApp({ cert_file_name: certFile, key_file_name: keyFile })
  } catch (error) {
    throw new Error(`cannot load the TLS certificate ${certFile} or key ${keyFile}`, { cause: error })
  }
}

function listen(
  app: TemplatedApp,
  at: { host: string; port: number },
  tls: boolean,
  dispatcher: Dispatcher,
): Promise<Listener> {
  app.any('/*', (res, req) => dispatcher.handle(res, req, tls))
  return new Promise((resolve, reject) => {
    // Exclusive: without it a second device on the same port would silently share its traffic.
    ;(app as unknown as ExclusiveListen).listen(at.host, at.port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (!socket) return reject(new ListenError(`cannot listen on ${at.host}:${at.port}`))
      const port = uWS.us_socket_local_port(socket)
      dispatcher.listeningAt(listenerOrigins(at.host, port, tls))
      resolve({ app: app as Listener['app'], socket, port })
    })
  })
}
export { BODY_LIMIT, readBody } from './body.js'
export { openApiDocument } from './openapi.js'
