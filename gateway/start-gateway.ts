import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSecureContext, type SecureContext } from 'node:tls'
import type { Logger } from 'pino'
import uWS, { type TemplatedApp, type us_listen_socket } from 'uWebSockets.js'
import { DiagFront } from './diag-front.js'
import { Dispatcher } from './dispatch.js'
import { ListenError } from './errors.js'
import type { Gateway, GatewayOptions } from './types.js'
import { listenerOrigins } from './listener-origins.js'
import { type DirectListener, listenDirect } from './listen-direct.js'
import { readServedTls, type ServedTls } from './served-tls.js'

interface Listener extends DirectListener {
  /** The DIAG build's front on the public port; uWS then listens on a unix socket behind it. */
  front?: DiagFront
}

/** The longest path a unix socket's address holds on Linux. */
const UNIX_PATH_MAX = 107

/** The DIAG build's fronts: where their uWS listeners' unix sockets are, and the TLS context of the HTTPS one. */
interface Fronts {
  dir: string
  tls?: SecureContext
}

/** Starts the HTTP and/or HTTPS listeners (port 0 picks a free port); both share one dispatcher. */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const dispatcher = new Dispatcher(options, options.https && (await servedTls(options.https)))
  const listeners: Listener[] = []
  let fronts: Fronts | undefined
  const stop = (): void => {
    for (const l of listeners) {
      l.front?.stopAccepting()
      uWS.us_listen_socket_close(l.socket)
    }
  }
  const drop = async (): Promise<void> => {
    for (const l of listeners) l.app.close()
    await Promise.all(listeners.map((l) => l.front?.close()))
    if (fronts) await rm(fronts.dir, { recursive: true, force: true })
  }
  let http: Listener | undefined
  let https: Listener | undefined
  try {
    if (options.diag) fronts = await openFronts(options.https)
    if (options.http) {
      http = await listen(uWS.App(), options.http, false, dispatcher, fronts, options.logger)
      listeners.push(http)
    }
    if (options.https) {
      const app = fronts ? uWS.App() : tlsApp(options.https)
      https = await listen(app, options.https, true, dispatcher, fronts, options.logger)
      listeners.push(https)
    }
  } catch (error) {
    stop()
    await drop()
    throw error
  }
  const front = fronts ? { front: true } : {}
  options.logger.info({ httpPort: http?.port, httpsPort: https?.port, ...front }, 'gateway listening')
  let closing: Promise<void> | undefined
  return {
    ...(http ? { httpPort: http.port } : {}),
    ...(https ? { httpsPort: https.port } : {}),
    close() {
      closing ??= (async () => {
        stop()
        await dispatcher.idle()
        await drop()
      })()
      return closing
    },
  }
}

function tlsApp({ certFile, keyFile }: { certFile: string; keyFile: string }): TemplatedApp {
  try {
    return uWS.SSLApp({ cert_file_name: certFile, key_file_name: keyFile })
  } catch (error) {
    throw tlsFilesError(certFile, keyFile, error)
  }
}

/** The chain the HTTPS listener is about to load, for `GET /api/system/tls`. */
async function servedTls({ certFile, keyFile }: { certFile: string; keyFile: string }): Promise<ServedTls> {
  try {
    return await readServedTls(certFile)
  } catch (error) {
    throw tlsFilesError(certFile, keyFile, error)
  }
}

function tlsFilesError(certFile: string, keyFile: string, cause: unknown): Error {
  return new Error(`cannot load the TLS certificate ${certFile} or key ${keyFile}`, { cause })
}

/** A directory of this process's user alone (mkdtemp makes it 0700) for the unix sockets, and the fronts' TLS. */
async function openFronts(https: GatewayOptions['https']): Promise<Fronts> {
  let context: SecureContext | undefined
  if (https) {
    const { certFile, keyFile } = https
    try {
      context = createSecureContext({ cert: await readFile(certFile), key: await readFile(keyFile) })
    } catch (error) {
      throw tlsFilesError(certFile, keyFile, error)
    }
  }
  const dir = await mkdtemp(join(tmpdir(), 'hemd-front-'))
  // A unix socket's path holds 107 bytes (sun_path): a longer one would be cut, and name another file.
  if (Buffer.byteLength(join(dir, 'https.sock')) > UNIX_PATH_MAX) {
    await rm(dir, { recursive: true, force: true })
    throw new Error(`the temporary directory ${tmpdir()} is too deep for the DIAG front's unix sockets (TMPDIR)`)
  }
  return { dir, ...(context ? { tls: context } : {}) }
}

async function listen(
  app: TemplatedApp,
  at: { host: string; port: number },
  tls: boolean,
  dispatcher: Dispatcher,
  fronts: Fronts | undefined,
  logger: Logger,
): Promise<Listener> {
  const fronted = fronts !== undefined
  app.any('/*', (res, req) => dispatcher.handle(res, req, tls, fronted))
  const listener = fronts ? await listenBehindFront(app, at, tls, fronts, logger) : await listenDirect(app, at)
  dispatcher.listeningAt(listenerOrigins(at.host, listener.port, tls), tls, listener.port)
  return listener
}

/** uWS on a unix socket of the fronts' directory, the front on the public port (node's listen is exclusive). */
async function listenBehindFront(
  app: TemplatedApp,
  at: { host: string; port: number },
  tls: boolean,
  fronts: Fronts,
  logger: Logger,
): Promise<Listener> {
  const upstream = join(fronts.dir, tls ? 'https.sock' : 'http.sock')
  const socket = await new Promise<us_listen_socket>((resolve, reject) =>
    app.listen_unix((s) => (s ? resolve(s) : reject(new ListenError(`cannot listen on ${upstream}`))), upstream),
  )
  try {
    const front = await DiagFront.listen({ ...at, upstream, ...(tls && fronts.tls ? { tls: fronts.tls } : {}), logger })
    return { app: app as Listener['app'], socket, port: front.port, front }
  } catch (error) {
    uWS.us_listen_socket_close(socket)
    throw error
  }
}
