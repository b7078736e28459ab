import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { clientContext } from './tls-client.js'

export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json: any
}

/** The body as JSON, or undefined when it is not JSON. */
export function jsonOrUndefined(text: string): any {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * One HTTP(S) request; HTTPS accepts the device's self-signed certificate. `localAddress` picks the
 * client's address (any of 127.0.0.0/8 is loopback on Linux: another client, as the device sees it).
 */
export function call(
  url: string,
  init: {
    method?: string
    headers?: Record<string, string>
    body?: string
    localAddress?: string
    /** Aborts the request: it rejects, and its connection is closed. */
    signal?: AbortSignal
  } = {},
): Promise<Answer> {
  const target = new URL(url)
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: init.method ?? 'GET',
        headers: init.headers ?? {},
        rejectUnauthorized: false,
        ...(target.protocol === 'https:' ? { secureContext: clientContext() } : {}),
        agent: false,
        ...(init.localAddress ? { localAddress: init.localAddress } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, text, json: jsonOrUndefined(text) }),
        )
      },
    )
    req.on('error', reject)
    req.end(init.body)
  })
}
