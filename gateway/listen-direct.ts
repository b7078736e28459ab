import uWS, { type TemplatedApp, type us_listen_socket } from 'uWebSockets.js'
import { ListenError } from './errors.js'

/** uWS's `ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT` (a const enum in its typings, so not importable as a value). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1

/** `listen(host, port, options, cb)` exists at run time but is missing from uWS's typings. */
interface ExclusiveListen {
  listen(host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void): void
}

export interface DirectListener {
  // `close()` (drop every connection) exists at run time but is missing from uWS's typings.
  app: TemplatedApp & { close(): void }
  socket: us_listen_socket
  port: number
}

/** `app` listening on `at` (port 0 picks a free one), and on that port alone. */
export function listenDirect(app: TemplatedApp, at: { host: string; port: number }): Promise<DirectListener> {
  return new Promise((resolve, reject) => {
    // Exclusive: without it a second device on the same port would silently share its traffic.
    ;(app as unknown as ExclusiveListen).listen(at.host, at.port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (!socket) return reject(new ListenError(`cannot listen on ${at.host}:${at.port}`))
      resolve({ app: app as DirectListener['app'], socket, port: uWS.us_socket_local_port(socket) })
    })
  })
}
