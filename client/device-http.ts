import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'

export interface DeviceAnswer {
  status: number
  body: any
}

export interface DeviceHttpOptions {
  /** Accept the device's self-signed certificate (it has no CA until an operator installs one). */
  insecure?: boolean
  token?: string
}

/** One JSON request to a device; the answer's body is parsed JSON, or the text when it is not JSON. */
export function deviceRequest(url: string, method: 'GET' | 'POST', body: unknown, o: DeviceHttpOptions = {}): Promise<DeviceAnswer> {
  const target = new URL(url)
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method,
        rejectUnauthorized: !o.insecure,
        headers: {
          ...(payload ? { 'Content-Type': 'application/json' } : {}),
          ...(o.token ? { Authorization: `Bearer ${o.token}` } : {}),
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        res.on('end', () => {
          let parsed: unknown = text
          try {
            parsed = JSON.parse(text)
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed })
        })
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}
