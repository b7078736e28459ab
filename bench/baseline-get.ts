import uWS from 'uWebSockets.js'
import { listenLocal } from './listen-local.js'
import type { ListeningServer, TlsFiles } from './types.js'

/** Baseline for (d): a bare uWS GET over HTTPS answering a small JSON made per request, as status is. */
export function serveGetBaseline(tls: TlsFiles): Promise<ListeningServer> {
  const app = uWS.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile })
  app.get('/*', (res) => {
    const body = JSON.stringify({
      ctx: 'ready',
      fls_state: 0,
      uptime: Math.floor(process.uptime()),
      ts: Math.floor(Date.now() / 1000),
    })
    res.cork(() => {
      res.writeHeader('Content-Type', 'application/json').end(body)
    })
  })
  return listenLocal(app)
}
