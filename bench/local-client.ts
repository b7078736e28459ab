import { Agent, request } from 'node:https'

/** A JSON exchange: the answer's status and parsed body (undefined when empty). */
export type JsonCall = (method: string, url: string, body?: unknown) => Promise<{ status: number; body: unknown }>

/**
 * A client of its own address: HTTPS (the bench's self-signed certificate accepted) on one kept-alive connection
 * from `localAddress`, any of 127.0.0.0/8: to the cloud, another client (its per-address rate limit is per client).
 */
export function jsonClient(localAddress: string): { call: JsonCall; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress, rejectUnauthorized: false })
  const once = (method: string, url: string, text: string | undefined) =>
    new Promise<{ status: number; body: unknown; reused: boolean }>((resolve, reject) => {
      const headers: Record<string, string> = text === undefined ? {} : { 'Content-Type': 'application/json' }
      const req = request(url, { method, agent, headers }, (res) => {
        let answer = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk))
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: answer === '' ? undefined : JSON.parse(answer), reused: false }),
        )
      })
      // A kept-alive connection the server closed as it idled fails the request sent on it: that one is sent again.
      req.on('error', (err) => (req.reusedSocket ? resolve({ status: 0, body: err, reused: true }) : reject(err)))
      req.end(text)
    })
  const call: JsonCall = async (method, url, body) => {
    const text = body === undefined ? undefined : JSON.stringify(body)
    const first = await once(method, url, text)
    const { status, body: answer } = first.reused ? await once(method, url, text) : first
    return { status, body: answer }
  }
  return { call, close: () => agent.destroy() }
}
