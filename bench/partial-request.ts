import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'

/** The answer to a request whose body never came in full, as its raw socket saw it. */
export interface PartialAnswer {
  /** The answer's status; undefined when the device closed the connection without one, or never answered. */
  status: number | undefined
  /** When the last byte sent was handed to the kernel, and when the answer's first byte came (performance.now()). */
  lastByteAt: number
  answeredAt: number
}

export interface PartialRequest {
  /** Resolves once the head and the partial body were handed to the kernel. */
  written: Promise<void>
  /** Resolves at the answer's head (or the close, or `timeoutMs` after the connect). */
  answer: Promise<PartialAnswer>
}

/**
 * Sends a request's head, which announces `Content-Length` bytes, and only `partial` of its body,
 * then nothing more: the client that stalls mid-body. Over TLS for https URLs (the bench's
 * self-signed certificate is taken as it is).
 */
export function partialRequest(
  url: string,
  request: { method: string; path: string; headers: Record<string, string>; contentLength: number },
  partial: Buffer,
  timeoutMs: number,
): PartialRequest {
  const { hostname, port, protocol } = new URL(url)
  const socket: Socket =
    protocol === 'https:'
      ? tlsConnect({ host: hostname, port: Number(port), rejectUnauthorized: false, servername: 'localhost' })
      : netConnect(Number(port), hostname)
  const head =
    `${request.method} ${request.path} HTTP/1.1\r\nHost: ${hostname}\r\n` +
    Object.entries({ ...request.headers, 'Content-Length': String(request.contentLength) })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    '\r\n'
  let lastByteAt = Number.NaN
  const written = new Promise<void>((resolve, reject) => {
    socket.once(protocol === 'https:' ? 'secureConnect' : 'connect', () =>
      socket.write(Buffer.concat([Buffer.from(head, 'latin1'), partial]), (error) => {
        lastByteAt = performance.now()
        if (error) reject(error)
        else resolve()
      }),
    )
    socket.once('error', reject)
  })
  const answer = new Promise<PartialAnswer>((resolve) => {
    let received = ''
    const finish = (status: number | undefined) => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ status, lastByteAt, answeredAt: performance.now() })
    }
    const timer = setTimeout(() => finish(undefined), timeoutMs)
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      received += chunk
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(received)?.[1]
      if (status !== undefined) finish(Number(status))
    })
    socket.on('close', () => finish(undefined))
    // A reset is seen as the close that follows it.
    socket.on('error', () => undefined)
  })
  return { written, answer }
}
