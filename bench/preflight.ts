import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { answered } from './measure.js'
import type { HttpLoad, Scenario } from './types.js'

/**
 * Runs a scenario's exchange once and throws unless it is answered 2xx (or the status it asks for): a load of failing
 * requests measures nothing, and the answer says why it fails.
 */
export function preflight(scenario: Scenario): Promise<void> {
  if (scenario.load.kind === 'serial') {
    return scenario.load.run().catch((error: unknown) => {
      throw new Error(`${scenario.id}: ${(error as Error).message}`, { cause: error })
    })
  }
  return preflightHttp(scenario.id, scenario.load)
}

function preflightHttp(id: string, load: HttpLoad): Promise<void> {
  const url = new URL(load.url)
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = send(url, { method: load.method, headers: load.headers, rejectUnauthorized: false }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text.length < 500 ? (text += chunk) : undefined))
      res.on('end', () => {
        const status = res.statusCode ?? 0
        if (answered(status, load.status)) resolve()
        else reject(new Error(`${id}: ${load.method} ${url.pathname} answered ${status} ${text}`))
      })
    })
    req.on('error', reject)
    req.end(load.body)
  })
}
