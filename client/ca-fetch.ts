// A fetch for Node that trusts one CA (PEM) for HTTPS, for the cloud of an installation with a CA of
// its own: Node's global fetch takes the system's CAs only. Just what the broker client asks of fetch.
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'

export function fetchTrusting(ca: string | Buffer): typeof fetch {
  return (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    const body = typeof init.body === 'string' ? Buffer.from(init.body) : undefined
    if (init.body !== undefined && init.body !== null && body === undefined)
      return Promise.reject(new TypeError('fetchTrusting sends string bodies only'))
    const headers = {
      ...Object.fromEntries(new Headers(init.headers).entries()),
      ...(body ? { 'content-length': String(body.length) } : {}),
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    return new Promise<Response>((resolve, reject) => {
      const options = { method: init.method ?? 'GET', headers, ...(url.protocol === 'https:' ? { ca } : {}) }
      const req = send(url, { ...options, ...(init.signal ? { signal: init.signal } : {}) }, (res) =>
        collect(res).then(resolve, reject),
      )
      req.on('error', reject)
      req.end(body)
    })
  }
}

async function collect(res: IncomingMessage): Promise<Response> {
  const chunks: Buffer[] = []
  for await (const chunk of res) chunks.push(chunk as Buffer)
  const status = res.statusCode ?? 0
  const headers = new Headers()
  for (const [name, value] of Object.entries(res.headers))
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one)
  // A Response of these statuses may have no body; any other outside 200–599 is no HTTP answer fetch knows.
  const empty = status === 204 || status === 205 || status === 304
  return new Response(empty ? null : Buffer.concat(chunks), { status, headers })
}
