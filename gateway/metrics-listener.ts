import type { Logger } from 'pino'
import uWS, { type HttpResponse } from 'uWebSockets.js'
import type { Exposition } from '../metrics/index.js'
import { listenDirect } from './listen-direct.js'

export interface MetricsListener {
  port: number
  close(): void
}

const TEXT = 'text/plain; charset=utf-8'

/**
 * `hemd --metrics HOST:PORT`: plain HTTP for a scraper on the board or the LAN, serving `GET /metrics` without a
 * token and nothing else (404). What it shows holds no secret (docs/metrics.md), and it is off unless asked for.
 */
export async function startMetricsListener(
  at: { host: string; port: number },
  metrics: { exposition(): Promise<Exposition> },
  logger: Logger,
): Promise<MetricsListener> {
  const app = uWS.App()
  app.get('/metrics', (res) => {
    let open = true
    res.onAborted(() => (open = false))
    metrics.exposition().then(
      ({ body, contentType }) => open && answer(res, '200 OK', contentType, body),
      (err: unknown) => {
        logger.error({ err: (err as Error).message }, 'the metrics could not be rendered')
        if (open) answer(res, '500 Internal Server Error', TEXT, 'the metrics could not be rendered\n')
      },
    )
  })
  app.any('/*', (res) => answer(res, '404 Not Found', TEXT, 'not found: this listener serves GET /metrics only\n'))
  const listener = await listenDirect(app, at)
  logger.info({ port: listener.port }, 'metrics listening')
  return {
    port: listener.port,
    close() {
      uWS.us_listen_socket_close(listener.socket)
      listener.app.close()
    },
  }
}

function answer(res: HttpResponse, status: string, contentType: string, body: string): void {
  res.cork(() => res.writeStatus(status).writeHeader('Content-Type', contentType).end(body))
}
