import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { parseJson, type HttpTransport } from '../../authenticator/index.js'

/** A URL the CLI will not call: not http(s), or plain http to another host than this one. */
export class CloudUrlError extends Error {
  override readonly name = 'CloudUrlError'
}

const MAX_ANSWER = 64 * 1024
const TIMEOUT_MS = 15_000

/**
 * The core's transport over node's http(s), trusting `ca` (PEM) for the cloud's certificate when given, else
 * the system's CAs. Plain http only to a loopback address (a cloud under test); every other host needs TLS.
 */
export function httpsTransport(ca?: string): HttpTransport {
  return (method, text, body) => {
    const url = checkedUrl(text)
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const headers: Record<string, string | number> = { Accept: 'application/json' }
    if (payload) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': payload.length })
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const tls = url.protocol === 'https:' ? { minVersion: 'TLSv1.2' as const, ...(ca ? { ca } : {}) } : {}
    return new Promise((resolve, reject) => {
      const req = send(url, { method, headers, timeout: TIMEOUT_MS, ...tls }, (res) => {
        readAnswer(res).then((raw) => resolve({ status: res.statusCode ?? 0, body: parseJson(raw) }), reject)
      })
      req.on('timeout', () => req.destroy(new Error(`no answer from ${url.origin} within ${TIMEOUT_MS} ms`)))
      req.on('error', reject)
      req.end(payload)
    })
  }
}

export function checkedUrl(text: string): URL {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new CloudUrlError(`${text} is not a URL`)
  }
  if (url.protocol === 'https:') return url
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return url
  throw new CloudUrlError(`${url.origin}: the cloud must be https:// (plain http only on this host)`)
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

function readAnswer(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    res.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_ANSWER) res.destroy(new Error(`an answer over ${MAX_ANSWER} bytes`))
      else chunks.push(chunk)
    })
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    res.on('error', reject)
  })
}
