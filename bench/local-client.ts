import { Agent, request } from 'node:https'

/** A JSON exchange: the answer's status and parsed body (undefined when empty). */
export type JsonCall = (method: string, url: string, body?: unknown) => Promise<{ status: number; body: unknown }>

/**
 * A client of its own address: HTTPS (the bench's self-signed certificate accepted) on one kept-alive connection
 * from `localAddress`, any of 127.0.0.0/8: to the cloud, another client (its per-address rate limit is per client).
 */
export function jsonClient(localAddress: string): { call: JsonCall; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress, rejectUnauthorized: false })
  const call: JsonCall = (method, url, body) =>
    new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body)
      const headers: Record<string, string> = text === undefined ? {} : { 'Content-Type': 'application/json' }
      const req = request(url, { method, agent, headers }, (res) => {
        let answer = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk))
        res.on('end', () => resolve({ status: res.statusCode!, body: answer === '' ? undefined : JSON.parse(answer) }))
      })
      req.on('error', reject)
      req.end(text)
    })
  return { call, close: () => agent.destroy() }
}
