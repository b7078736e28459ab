import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { Scenario } from './types.js'

/**
 * Sends a scenario's request once and throws unless it is answered 2xx: a load of failing
 * requests measures nothing, and the answer says why it fails.
 */
export function preflight(scenario: Scenario): Promise<void> {
  const url = new URL(scenario.url)
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = send(url, { method: scenario.method, headers: scenario.headers, rejectUnauthorized: false }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () => {
        const status = res.statusCode ?? 0
        if (status >= 200 && status < 300) resolve()
        else reject(new Error(`${scenario.id}: ${scenario.method} ${url.pathname} answered ${status} ${text}`))
      })
    })
    req.on('error', reject)
    req.end(scenario.body)
  })
}
