import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import tls from 'node:tls'
import type { Logger } from 'pino'
import { ListenError } from './errors.js'
import { proxyHeader } from './proxy-header.js'
import { ForgedProxyHeaderError, RequestLines } from './request-lines.js'

/** How long a stopping front lets its connections hand on what uWS wrote to them before it drops them. */
const CLOSE_GRACE_MS = 1000
/** A client that takes nothing of what uWS wrote for this long is dropped: uWS's own limit for a stuck socket. */
const STALL_MS = 10_000

export interface DiagFrontOptions {
  host: string
  port: number
  /** The unix socket of the uWS listener the connections are relayed to. */
  upstream: string
  /** HTTPS: the front ends TLS itself, with this context. */
  tls?: tls.SecureContext
  logger: Logger
  /** STALL_MS unless a test says otherwise. */
  stallMs?: number
}

/**
 * The DIAG build's listener on a public port (docs/diag.md, "The front"). uWS leaves a request line
 * with raw spaces after its path unanswered, and offers no hook to take it: the front takes the
 * connection first (ending TLS itself on the HTTPS port) and relays it, one connection for one, to a
 * uWS listener on a unix socket in a directory only this process's user can enter, its request lines
 * mended on the way (RequestLines). Who the client is travels as a PROXY protocol header written
 * before its first byte, and the unix socket tells the plain front's connections from the TLS
 * front's, so the gateway sees the address and transport it would see itself. A connection lives as
 * long as uWS keeps its twin, opened at the accept so that uWS's idle timeout covers the TLS
 * handshake; its bytes flow only as fast as the other side takes them, and the front holds at most
 * one incomplete head of it.
 */
export class DiagFront {
  private readonly open = new Set<net.Socket>()

  private constructor(
    private readonly server: net.Server,
    private readonly options: DiagFrontOptions,
  ) {
    server.on('connection', (socket) => this.relay(socket))
  }

  /** Listens on the public port (port 0 picks one); rejects with ListenError when it cannot. */
  static listen(options: DiagFrontOptions): Promise<DiagFront> {
    // Half-open: a client's end of sending goes to uWS as its own, and uWS decides what follows.
    const server = net.createServer({ allowHalfOpen: true })
    const front = new DiagFront(server, options)
    return new Promise((resolve, reject) => {
      const failed = (error: Error) =>
        reject(new ListenError(`cannot listen on ${options.host}:${options.port}`, { cause: error }))
      server.once('error', failed)
      server.listen({ host: options.host, port: options.port }, () => {
        server.off('error', failed)
        // A failed accept (out of file descriptors) costs that client its connection, never the device.
        server.on('error', (error) => options.logger.warn({ err: error }, 'DIAG front: a connection was not accepted'))
        resolve(front)
      })
    })
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port
  }

  /** No new connection is taken (it is refused at once); those open go on. */
  stopAccepting(): void {
    this.server.close()
  }

  /**
   * Once uWS has closed every twin: lets what uWS wrote reach the clients (each connection then
   * closes itself), and drops whatever is still open after CLOSE_GRACE_MS.
   */
  async close(): Promise<void> {
    const closed = Promise.all([...this.open].map((socket) => new Promise((done) => socket.once('close', done))))
    const grace = new AbortController()
    await Promise.race([closed, sleep(CLOSE_GRACE_MS, undefined, { signal: grace.signal }).catch(() => undefined)])
    grace.abort()
    for (const socket of this.open) socket.destroy()
  }

  private relay(socket: net.Socket): void {
    const header = proxyHeader(socket)
    if (!header) return void socket.destroy()
    this.open.add(socket)
    const client = this.options.tls
      ? new tls.TLSSocket(socket, { isServer: true, secureContext: this.options.tls })
      : socket
    const upstream = net.connect({ path: this.options.upstream, allowHalfOpen: true })
    const lines = new RequestLines()
    let timer: NodeJS.Timeout | undefined
    let closing = false
    const drop = (error?: Error) => {
      clearTimeout(timer)
      if (error instanceof ForgedProxyHeaderError) this.options.logger.debug({ err: error }, 'DIAG front: dropped')
      for (const s of [socket, client, upstream, lines]) s.destroy()
    }
    const dropIn = (ms: number) => {
      clearTimeout(timer)
      timer = setTimeout(drop, ms).unref()
    }
    socket.on('close', () => {
      this.open.delete(socket)
      drop()
    })
    for (const s of [socket, client, upstream, lines]) s.on('error', drop)
    upstream.write(header)
    client.pipe(lines).pipe(upstream)
    const stallMs = this.options.stallMs ?? STALL_MS
    upstream.on('data', (chunk: Buffer) => {
      if (client.write(chunk)) return
      upstream.pause()
      dropIn(stallMs)
    })
    client.on('drain', () => {
      if (closing) return
      clearTimeout(timer)
      upstream.resume()
    })
    // uWS closed its side (an answer with `Connection: close`, its idle timeout, a dropped request): what it
    // wrote reaches the client, then the connection closes whole, as uWS closes its own (a client that takes
    // none of it for stallMs is dropped all the same). What the client still sends goes nowhere.
    upstream.on('end', () => {
      closing = true
      lines.unpipe(upstream)
      client.unpipe(lines)
      upstream.destroy()
      client.end()
      dropIn(stallMs)
    })
    client.on('finish', () => socket.destroy())
  }
}
