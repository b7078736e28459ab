import { type Agent, request } from 'node:http'

/**
 * One request to `/api/auth/token` over plain HTTP through `agent` (whose socket options, such as
 * `localAddress`, pick the client's address): a GET for a challenge, or a POST of `body`.
 */
export function tokenExchange(
  agent: Agent,
  base: string,
  method: 'GET' | 'POST',
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}/api/auth/token`,
      { method, agent, headers: body ? { 'content-type': 'application/json' } : {} },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode!, text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
