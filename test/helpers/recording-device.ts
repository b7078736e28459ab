// A server in the device's place that records every request and answers what the test says: for the
// client's own behaviour (what it sends, how it reads an answer no real device would give).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { x25519 } from '@noble/curves/ed25519.js'
import { HemClient } from '../../client/index.js'

export interface Seen {
  method: string
  path: string
  /** The bearer token, without its scheme. */
  token: string | undefined
  /** A JSON body, parsed; any other body is `{}`. */
  body: Record<string, unknown>
}

export interface Answer {
  status: number
  /** Sent as JSON. */
  body?: unknown
  /** Sent as is, instead of `body`. */
  text?: string
}

/**
 * An answer to GET /api/auth/token or /api/auth/init that a client can build its eJWT for: the
 * recording device never checks it, so any answer to the POST that follows is believed.
 */
export const challenge = {
  exp: 2 ** 31,
  spk: Buffer.from(x25519.getPublicKey(new Uint8Array(32).fill(9))).toString('base64'),
  jti: 'j',
  eid: 'eid',
}

/** Listens on loopback until the test ends; `url` is its plain HTTP address. */
export async function recordingDevice(
  t: { teardown(fn: () => unknown): void },
  answer: (request: Seen) => Answer,
): Promise<{ seen: Seen[]; url: string }> {
  const seen: Seen[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const json = req.headers['content-type'] === 'application/json'
      const request: Seen = {
        method: req.method!,
        path: req.url!,
        token: req.headers.authorization?.replace(/^Bearer /, ''),
        body: json ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {},
      }
      seen.push(request)
      const { status, body, text } = answer(request)
      const payload = text ?? (body === undefined ? '' : JSON.stringify(body))
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) })
      res.end(payload)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  return { seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

/** A client whose token for a scope is the scope's name, so the server sees which scope each call asked for. */
export class ScopeNamingClient extends HemClient {
  override async token(scope: string): Promise<string> {
    return scope
  }
}

/** A recording device and a client of it that needs no login. */
export async function recordingClient(
  t: { teardown(fn: () => unknown): void },
  answer: (request: Seen) => Answer,
): Promise<{ seen: Seen[]; client: ScopeNamingClient }> {
  const { seen, url } = await recordingDevice(t, answer)
  return { seen, client: new ScopeNamingClient({ url }) }
}
