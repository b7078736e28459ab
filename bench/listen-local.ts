import uWS, { type TemplatedApp } from 'uWebSockets.js'
import type { ListeningServer } from './types.js'

/** Listens on a free port of 127.0.0.1. */
export function listenLocal(app: TemplatedApp): Promise<ListeningServer> {
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('cannot listen on 127.0.0.1'))
      resolve({
        port: uWS.us_socket_local_port(socket),
        close: async () => uWS.us_listen_socket_close(socket),
      })
    })
  })
}
