import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { readFile } from 'node:fs/promises'
import type { ListeningServer, TlsFiles } from './types.js'

/** An answer of hem-cloud's, recorded: its status and JSON body. */
export interface CannedAnswer {
  status: number
  body: unknown
}

/**
 * The key of a request among the canned answers: its method and path, each id of the path (a segment of 40
 * characters or more: an eventid, rid, pidx) as `:id`, so that every request of a route finds the route's answer.
 */
export function cannedKey(method: string, path: string): string {
  return `${method} ${path.split('?')[0]!.replace(/\/[A-Za-z0-9_-]{40,}/g, '/:id')}`
}

/**
 * Baseline of the approvals load: node's HTTPS server (hem-cloud's own front stack, TLS 1.3), reading each body and
 * answering each route of an approval with hem-cloud's recorded answer: the HTTP and JSON an approval costs, without
 * the cloud's checks, crypto and JetStream.
 */
export async function serveCannedBaseline(
  tls: TlsFiles,
  answers: Record<string, CannedAnswer>,
): Promise<ListeningServer> {
  const texts = new Map(
    Object.entries(answers).map(([key, a]) => [key, { status: a.status, text: JSON.stringify(a.body) }]),
  )
  const [cert, key] = await Promise.all([readFile(tls.certFile), readFile(tls.keyFile)])
  const server = createServer({ cert, key, minVersion: 'TLSv1.3' }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      if (chunks.length > 0) JSON.parse(Buffer.concat(chunks).toString('utf8'))
      const answer = texts.get(cannedKey(req.method ?? '', req.url ?? '')) ?? { status: 404, text: '{}' }
      res.writeHead(answer.status, {
        'Content-Type': 'application/json',
        'Content-Length': String(Buffer.byteLength(answer.text)),
      })
      res.end(answer.text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
