import uWS from 'uWebSockets.js'
import { listenLocal } from './listen-local.js'
import type { ListeningServer } from './types.js'

/** Baseline for (d): a bare uWS GET over plain HTTP answering a small JSON made per request, as status is. */
export function serveGetBaseline(): Promise<ListeningServer> {
  const app = uWS.App()
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
