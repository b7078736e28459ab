// One HTTP exchange with a device, over plain HTTP or TLS. TLS trust is one of: a CA (`ca`),
// a fingerprint pinned on first use (`pins`), nothing (`insecure`), or the system's CAs. The
// TLS connection is made and its certificate judged before any byte of the request is sent.
import { request as httpRequest, type IncomingHttpHeaders, type RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import { connect as tlsConnect, type TLSSocket } from 'node:tls'
import { DEADLINE_MS } from '../protocol/index.js'
import { DeviceUnreachableError, FingerprintMismatchError } from './errors.js'
import type { PinStore } from './pin-store.js'

export interface TransportOptions {
  /** Trust this CA (PEM) for the device's certificate. */
  ca?: string | Buffer
  /** Accept any certificate: only by the user's explicit choice. */
  insecure?: boolean
  /** Trust on first use: the first certificate an origin presents is pinned, and must not change. */
  pins?: PinStore
  /** A TLS handshake that takes, or a request whose connection is idle, this long fails (default 90 s). */
  timeoutMs?: number
}

/**
 * Longer than the device's longest command deadline (an install waits up to 60 s), so that a slow
 * operation ends in the device's own 504, which says it may still complete, not in a client timeout.
 */
const IDLE_TIMEOUT_MS = DEADLINE_MS.long + 30_000

export interface RequestInput {
  token?: string
  /** Sent as JSON. */
  json?: unknown
  /** Sent as is, with `headers` describing it; `onProgress` hears of every chunk written. */
  body?: Uint8Array
  headers?: Record<string, string>
  onProgress?(sent: number, total: number): void
  /** Hears of every chunk of the answer's body: `total` is its Content-Length, when the device sends one. */
  onReceived?(received: number, total: number | undefined): void
}

export interface Exchange {
  status: number
  headers: IncomingHttpHeaders
  bytes: Buffer
}

const CHUNK = 64 * 1024

export class Transport {
  readonly base: URL

  constructor(
    url: string,
    private readonly o: TransportOptions = {},
  ) {
    this.base = new URL(url)
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:')
      throw new RangeError(`${url}: the device URL must be http:// or https://`)
    if (o.insecure && o.ca !== undefined) throw new RangeError('a CA and insecure exclude each other')
  }

  get origin(): string {
    return this.base.origin
  }

  async request(method: string, path: string, input: RequestInput = {}): Promise<Exchange> {
    const url = new URL(path, this.base)
    const payload = input.json !== undefined ? Buffer.from(JSON.stringify(input.json)) : input.body
    const headers: Record<string, string> = {
      ...(input.json !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...(payload !== undefined ? { 'Content-Length': String(payload.length) } : {}),
      ...(input.token ? { Authorization: `Bearer ${input.token}` } : {}),
      ...input.headers,
    }
    try {
      const socket = url.protocol === 'https:' ? await this.secureSocket(url) : undefined
      return await this.exchange(url, { method, headers }, socket, payload, input)
    } catch (err) {
      if (err instanceof FingerprintMismatchError) throw err
      throw new DeviceUnreachableError(url.origin, { cause: err })
    }
  }

  private exchange(
    url: URL,
    options: RequestOptions,
    socket: TLSSocket | undefined,
    payload: Uint8Array | undefined,
    { onProgress, onReceived }: Pick<RequestInput, 'onProgress' | 'onReceived'>,
  ): Promise<Exchange> {
    return new Promise((resolve, reject) => {
      // A device going down may close the connection while its certificate is judged: the request
      // must not be handed a socket whose close it would never hear of (it would wait for ever).
      if (socket && (socket.destroyed || !socket.writable || socket.readableEnded))
        return reject(new Error('the device closed the connection'))
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest
      const connection = socket ? { createConnection: () => socket } : {}
      const req = send(url, { ...options, ...connection, timeout: this.o.timeoutMs ?? IDLE_TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = []
        const length = Number(res.headers['content-length'])
        const total = Number.isSafeInteger(length) ? length : undefined
        let received = 0
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk)
          received += chunk.length
          onReceived?.(received, total)
        })
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }),
        )
        res.on('error', reject)
      })
      req.on('timeout', () => req.destroy(new Error('the device stopped answering')))
      req.on('error', reject)
      if (!payload) return void req.end()
      void writeChunks(req, payload, onProgress).catch((err: Error) => req.destroy(err))
    })
  }

  private async secureSocket(url: URL): Promise<TLSSocket> {
    const verify = this.o.ca !== undefined || (!this.o.insecure && !this.o.pins)
    const socket = await new Promise<TLSSocket>((resolve, reject) => {
      // URL keeps an IPv6 address in brackets; SNI names hosts, never addresses (RFC 6066).
      const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
      const s = tlsConnect({
        host,
        port: Number(url.port || 443),
        ...(isIP(host) ? {} : { servername: host }),
        rejectUnauthorized: verify,
        ...(this.o.ca !== undefined ? { ca: this.o.ca } : {}),
        ALPNProtocols: ['http/1.1'],
      })
      // A device that accepts the connection and never completes the handshake (one that is
      // going down, or not a device at all) must not hold the caller for ever.
      const stalled = () => s.destroy(new Error('the device did not complete the TLS handshake'))
      s.setTimeout(this.o.timeoutMs ?? IDLE_TIMEOUT_MS)
      s.once('timeout', stalled)
      s.once('secureConnect', () => {
        s.setTimeout(0)
        s.off('timeout', stalled)
        resolve(s)
      })
      s.once('error', reject)
    })
    if (verify || this.o.insecure || !this.o.pins) return socket
    const presented = socket.getPeerCertificate().fingerprint256
    const pinned = await this.o.pins.get(url.origin)
    if (pinned === undefined) await this.o.pins.set(url.origin, presented)
    else if (pinned !== presented) {
      socket.destroy()
      throw new FingerprintMismatchError(url.origin, pinned, presented)
    }
    return socket
  }
}

async function writeChunks(
  req: NodeJS.WritableStream,
  payload: Uint8Array,
  onProgress?: RequestInput['onProgress'],
): Promise<void> {
  for (let sent = 0; sent < payload.length;) {
    const piece = payload.subarray(sent, sent + CHUNK)
    await new Promise<void>((resolve, reject) => req.write(piece, (err) => (err ? reject(err) : resolve())))
    sent += piece.length
    onProgress?.(sent, payload.length)
  }
  req.end()
}
