import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'

export interface DeviceAnswer {
  status: number
  body: any
}

export interface DeviceHttpOptions {
  /** Accept the device's self-signed certificate (it has no CA until an operator installs one). */
  insecure?: boolean
  /** Trust this CA (PEM) for the device's certificate instead of the system's. */
  ca?: string | Buffer
  token?: string
}

/** One request to a device; the answer's body as the exact bytes sent. */
export function deviceDownload(url: string, method: 'GET' | 'POST', body: unknown, o: DeviceHttpOptions = {}): Promise<{ status: number; bytes: Buffer }> {
  const target = new URL(url)
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method,
        rejectUnauthorized: !o.insecure,
        ...(o.ca !== undefined ? { ca: o.ca } : {}),
        headers: {
          ...(payload ? { 'Content-Type': 'application/json' } : {}),
          ...(o.token ? { Authorization: `Bearer ${o.token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}

/** One JSON request to a device; the answer's body is parsed JSON, or the text when it is not JSON. */
export async function deviceRequest(url: string, method: 'GET' | 'POST', body: unknown, o: DeviceHttpOptions = {}): Promise<DeviceAnswer> {
  const { status, bytes } = await deviceDownload(url, method, body, o)
  const text = bytes.toString('utf8')
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON: keep the text
  }
  return { status, body: parsed }
}
