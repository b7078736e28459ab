import { chmod, lstat, unlink } from 'node:fs/promises'
import { connect, createServer, type Server, type Socket } from 'node:net'
import type { Logger } from 'pino'
import { type DiskHandle, DiskLockedError, DiskReadOnlyError } from '../../hal/index.js'
import {
  ClientFlag,
  Command,
  Errno,
  HandshakeFlag,
  Info,
  MAX_PAYLOAD,
  NBD_MAGIC,
  Option,
  OPTION_HEADER_BYTES,
  OPTION_MAGIC,
  OPTION_REPLY_MAGIC,
  OptionReply,
  REQUEST_BYTES,
  REQUEST_MAGIC,
  SIMPLE_REPLY_MAGIC,
  TransmissionFlag,
} from './nbd-protocol.js'
import { PeerGoneError, send, SocketReader } from './socket-io.js'

const SECTOR = 512
/** What one disk call moves (the HAL's limit), and so what a connection holds in memory. */
const PIECE = 1024 * 1024
const MAX_OPTION_DATA = 4096
const MAX_CONNECTIONS = 16
/** A client has this long to pick an export; an idle one is not left holding a connection slot. */
const NEGOTIATION_MS = 10_000

/** Where the export listens: TCP on loopback, or a Unix socket (owner only). */
export type NbdListen = { host: string; port: number } | { path: string }

interface Session {
  exportName?: string
}

/**
 * The device's unlocked disks as Network Block Device exports (`disk0`, `disk1`), so that a
 * Linux host can attach and mount them (`nbd-client`, `nbdfuse`, `qemu`). An export exists
 * exactly while its disk is unlocked, with the disk's mode: a read-only disk is exported
 * read-only. Locking a disk withdraws its export and drops the connections using it, the way
 * pulling a USB stick does. Each connection runs its requests one at a time.
 */
export class NbdServer {
  readonly #exports = new Map<string, DiskHandle>()
  readonly #sessions = new Map<Socket, Session>()

  private constructor(
    private readonly server: Server,
    private readonly logger: Logger,
  ) {}

  static async listen(at: NbdListen, logger: Logger): Promise<NbdServer> {
    const server = createServer({ noDelay: true })
    const nbd = new NbdServer(server, logger)
    server.maxConnections = MAX_CONNECTIONS
    server.on('connection', (socket) => nbd.accept(socket))
    if ('path' in at) await removeStaleSocket(at.path)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen('path' in at ? { path: at.path } : { host: at.host, port: at.port, exclusive: true }, () => {
        server.off('error', reject)
        resolve()
      })
    })
    // Whoever can connect can read an unlocked disk: the socket is the device user's alone.
    if ('path' in at) await chmod(at.path, 0o600)
    return nbd
  }

  /** `HOST:PORT` or the socket's path. */
  get address(): string {
    const address = this.server.address()
    if (typeof address === 'string') return address
    const host = address!.family === 'IPv6' ? `[${address!.address}]` : address!.address
    return `${host}:${address!.port}`
  }

  serve(name: string, handle: DiskHandle): void {
    if (this.#exports.get(name) === handle) return
    this.withdraw(name)
    this.#exports.set(name, handle)
  }

  withdraw(name: string): void {
    this.#exports.delete(name)
    for (const [socket, session] of this.#sessions) if (session.exportName === name) socket.destroy()
  }

  async close(): Promise<void> {
    this.#exports.clear()
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    for (const socket of this.#sessions.keys()) socket.destroy()
    await closed
  }

  private accept(socket: Socket): void {
    const session: Session = {}
    this.#sessions.set(socket, session)
    socket.on('error', () => undefined)
    socket.setTimeout(NEGOTIATION_MS, () => socket.destroy())
    this.run(socket, session)
      .catch((err: Error) => {
        if (!(err instanceof PeerGoneError)) this.logger.warn({ err: err.message }, 'an NBD connection failed')
      })
      .finally(() => {
        this.#sessions.delete(socket)
        socket.destroy()
      })
  }

  private async run(socket: Socket, session: Session): Promise<void> {
    const reader = new SocketReader(socket)
    const greeting = Buffer.alloc(18)
    greeting.writeBigUInt64BE(NBD_MAGIC, 0)
    greeting.writeBigUInt64BE(OPTION_MAGIC, 8)
    greeting.writeUInt16BE(HandshakeFlag.FIXED_NEWSTYLE | HandshakeFlag.NO_ZEROES, 16)
    await send(socket, greeting)
    const clientFlags = (await reader.read(4)).readUInt32BE(0)
    // Old-style clients and flags this server never offered end the handshake (proto.md).
    if (!(clientFlags & ClientFlag.FIXED_NEWSTYLE) || clientFlags & ~(ClientFlag.FIXED_NEWSTYLE | ClientFlag.NO_ZEROES))
      return
    const handle = await this.negotiate(socket, reader, (clientFlags & ClientFlag.NO_ZEROES) !== 0, session)
    if (!handle) return
    socket.setTimeout(0)
    this.logger.debug({ export: session.exportName, mode: handle.mode }, 'an NBD client attached')
    await new Transmission(socket, reader, handle, this.logger).run()
  }

  /** The option haggling: the export the client chose, or undefined when it ends the connection. */
  private async negotiate(
    socket: Socket,
    reader: SocketReader,
    noZeroes: boolean,
    session: Session,
  ): Promise<DiskHandle | undefined> {
    for (;;) {
      const head = await reader.read(OPTION_HEADER_BYTES)
      if (head.readBigUInt64BE(0) !== OPTION_MAGIC) return undefined
      const option = head.readUInt32BE(8)
      const length = head.readUInt32BE(12)
      if (length > MAX_OPTION_DATA) {
        await reader.skip(length, PIECE)
        await refuse(socket, option, OptionReply.ERR_TOO_BIG, `option data is limited to ${MAX_OPTION_DATA} bytes`)
        continue
      }
      const data = await reader.read(length)
      switch (option) {
        case Option.EXPORT_NAME:
          return this.exportName(socket, data, noZeroes, session)
        case Option.ABORT:
          await optionReply(socket, option, OptionReply.ACK)
          return undefined
        case Option.LIST:
          await this.list(socket, length)
          break
        case Option.INFO:
        case Option.GO: {
          const handle = await this.info(socket, option, data)
          if (handle && option === Option.GO) {
            session.exportName = handle.name
            return handle.disk
          }
          break
        }
        case Option.STARTTLS:
          await refuse(
            socket,
            option,
            OptionReply.ERR_POLICY,
            'the export listens on loopback or a Unix socket only, without TLS',
          )
          break
        default:
          await refuse(socket, option, OptionReply.ERR_UNSUP, `option ${option} is not supported`)
      }
    }
  }

  /** The old style's choice: this option has no error reply, so an unknown export can only end the connection. */
  private async exportName(
    socket: Socket,
    data: Buffer,
    noZeroes: boolean,
    session: Session,
  ): Promise<DiskHandle | undefined> {
    const name = data.toString('utf8')
    const handle = this.#exports.get(name)
    if (!handle) return undefined
    const answer = Buffer.alloc(noZeroes ? 10 : 134)
    answer.writeBigUInt64BE(BigInt(handle.sectors * SECTOR), 0)
    answer.writeUInt16BE(transmissionFlags(handle), 8)
    await send(socket, answer)
    session.exportName = name
    return handle
  }

  private async list(socket: Socket, length: number): Promise<void> {
    if (length !== 0) return refuse(socket, Option.LIST, OptionReply.ERR_INVALID, 'LIST takes no data')
    for (const name of this.#exports.keys()) {
      const entry = Buffer.alloc(4 + Buffer.byteLength(name))
      entry.writeUInt32BE(entry.length - 4, 0)
      entry.write(name, 4)
      await optionReply(socket, Option.LIST, OptionReply.SERVER, entry)
    }
    await optionReply(socket, Option.LIST, OptionReply.ACK)
  }

  /** INFO and GO describe an export alike; the export, when the client asked for one there is. */
  private async info(
    socket: Socket,
    option: number,
    data: Buffer,
  ): Promise<{ name: string; disk: DiskHandle } | undefined> {
    const request = parseInfoRequest(data)
    if (!request) {
      await refuse(socket, option, OptionReply.ERR_INVALID, 'malformed INFO/GO request')
      return undefined
    }
    const disk = this.#exports.get(request.name)
    if (!disk) {
      const message = `no export named ${JSON.stringify(request.name)}: is its disk unlocked?`
      await refuse(socket, option, OptionReply.ERR_UNKNOWN, message)
      return undefined
    }
    const exportInfo = Buffer.alloc(12)
    exportInfo.writeUInt16BE(Info.EXPORT, 0)
    exportInfo.writeBigUInt64BE(BigInt(disk.sectors * SECTOR), 2)
    exportInfo.writeUInt16BE(transmissionFlags(disk), 10)
    await optionReply(socket, option, OptionReply.INFO, exportInfo)
    if (request.wants.includes(Info.BLOCK_SIZE)) {
      // Any alignment works (partial sectors are read-modify-written); whole sectors are cheapest.
      const sizes = Buffer.alloc(14)
      sizes.writeUInt16BE(Info.BLOCK_SIZE, 0)
      sizes.writeUInt32BE(1, 2)
      sizes.writeUInt32BE(4096, 6)
      sizes.writeUInt32BE(MAX_PAYLOAD, 10)
      await optionReply(socket, option, OptionReply.INFO, sizes)
    }
    await optionReply(socket, option, OptionReply.ACK)
    return { name: request.name, disk }
  }
}

/** A socket file left by a device that died; one that still answers belongs to a live server. */
async function removeStaleSocket(path: string): Promise<void> {
  const stat = await lstat(path).catch(() => undefined)
  if (!stat?.isSocket()) return
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect({ path }, () => (probe.destroy(), resolve(true)))
    probe.on('error', () => resolve(false))
  })
  if (!live) await unlink(path)
}

function optionReply(socket: Socket, option: number, type: number, data: Uint8Array = Buffer.alloc(0)): Promise<void> {
  const head = Buffer.alloc(20)
  head.writeBigUInt64BE(OPTION_REPLY_MAGIC, 0)
  head.writeUInt32BE(option, 8)
  head.writeUInt32BE(type, 12)
  head.writeUInt32BE(data.length, 16)
  return send(socket, Buffer.concat([head, data]))
}

function refuse(socket: Socket, option: number, type: number, message: string): Promise<void> {
  return optionReply(socket, option, type, Buffer.from(message))
}

function transmissionFlags(handle: DiskHandle): number {
  return (
    TransmissionFlag.HAS_FLAGS | TransmissionFlag.SEND_FLUSH | (handle.mode === 'ro' ? TransmissionFlag.READ_ONLY : 0)
  )
}

function parseInfoRequest(data: Buffer): { name: string; wants: number[] } | undefined {
  if (data.length < 6) return undefined
  const nameLength = data.readUInt32BE(0)
  if (nameLength > data.length - 6) return undefined
  const count = data.readUInt16BE(4 + nameLength)
  if (data.length !== 6 + nameLength + 2 * count) return undefined
  const wants = Array.from({ length: count }, (_, i) => data.readUInt16BE(6 + nameLength + 2 * i))
  return { name: data.toString('utf8', 4, 4 + nameLength), wants }
}

/** The transmission phase of one connection: requests in order, each answered before the next is read. */
class Transmission {
  constructor(
    private readonly socket: Socket,
    private readonly reader: SocketReader,
    private readonly handle: DiskHandle,
    private readonly logger: Logger,
  ) {}

  async run(): Promise<void> {
    for (;;) {
      const request = await this.reader.read(REQUEST_BYTES)
      if (request.readUInt32BE(0) !== REQUEST_MAGIC) return
      const type = request.readUInt16BE(6)
      const cookie = request.subarray(8, 16)
      const offset = request.readBigUInt64BE(16)
      const length = request.readUInt32BE(24)
      switch (type) {
        case Command.READ:
          await this.read(cookie, offset, length)
          break
        case Command.WRITE:
          await this.write(cookie, offset, length)
          break
        case Command.FLUSH:
          await this.reply(cookie, await this.outcome(() => this.handle.flush()))
          break
        case Command.DISC:
          return
        default:
          await this.reply(cookie, Errno.EINVAL)
      }
    }
  }

  private async read(cookie: Buffer, offset: bigint, length: number): Promise<void> {
    const refused = this.checkRange(offset, length, Errno.EINVAL)
    if (refused) return this.reply(cookie, refused)
    let position = Number(offset)
    const end = position + length
    let header: Buffer | undefined = simpleReply(cookie, 0)
    while (position < end || header) {
      const take = Math.min(end - position, PIECE - (position % SECTOR))
      let bytes: Uint8Array
      try {
        bytes = take === 0 ? Buffer.alloc(0) : await this.bytesAt(position, take)
      } catch (err) {
        // Before the header the error can still be reported; after it, the reply is cut short.
        if (header) return this.reply(cookie, this.errnoOf(err))
        throw err
      }
      await send(this.socket, header ? Buffer.concat([header, bytes]) : bytes)
      header = undefined
      position += take
    }
  }

  private async write(cookie: Buffer, offset: bigint, length: number): Promise<void> {
    const refused = this.handle.mode === 'ro' ? Errno.EPERM : this.checkRange(offset, length, Errno.ENOSPC)
    if (refused) {
      await this.reader.skip(length, PIECE)
      return this.reply(cookie, refused)
    }
    let position = Number(offset)
    const end = position + length
    let failure = 0
    while (position < end) {
      const take = Math.min(end - position, PIECE - (position % SECTOR))
      const data = await this.reader.read(take)
      // After a failure the rest of the payload is still read, so that the next request is found.
      if (failure === 0) failure = await this.outcome(() => this.writeAt(position, data))
      position += take
    }
    await this.reply(cookie, failure)
  }

  private async bytesAt(position: number, length: number): Promise<Uint8Array> {
    const first = Math.floor(position / SECTOR)
    const count = Math.ceil((position + length) / SECTOR) - first
    const sectors = await this.handle.read(first, count)
    const skip = position - first * SECTOR
    return sectors.subarray(skip, skip + length)
  }

  /** Partial sectors at either end are read, patched and written back whole. */
  private async writeAt(position: number, data: Buffer): Promise<void> {
    const first = Math.floor(position / SECTOR)
    if (position % SECTOR === 0 && data.length % SECTOR === 0) return this.handle.write(first, data)
    const count = Math.ceil((position + data.length) / SECTOR) - first
    const sectors = Buffer.from(await this.handle.read(first, count))
    data.copy(sectors, position - first * SECTOR)
    await this.handle.write(first, sectors)
  }

  private checkRange(offset: bigint, length: number, beyondEnd: number): number {
    if (length > MAX_PAYLOAD) return Errno.EINVAL
    return offset + BigInt(length) > BigInt(this.handle.sectors * SECTOR) ? beyondEnd : 0
  }

  private async outcome(operation: () => Promise<void>): Promise<number> {
    try {
      await operation()
      return 0
    } catch (err) {
      return this.errnoOf(err)
    }
  }

  private errnoOf(err: unknown): number {
    if (err instanceof DiskLockedError) return Errno.ESHUTDOWN
    if (err instanceof DiskReadOnlyError) return Errno.EPERM
    if (err instanceof RangeError) return Errno.EINVAL
    this.logger.warn({ disk: this.handle.disk, err: (err as Error).message }, 'an NBD request failed in the HAL')
    return Errno.EIO
  }

  private reply(cookie: Buffer, errno: number): Promise<void> {
    return send(this.socket, simpleReply(cookie, errno))
  }
}

function simpleReply(cookie: Buffer, errno: number): Buffer {
  const reply = Buffer.alloc(16)
  reply.writeUInt32BE(SIMPLE_REPLY_MAGIC, 0)
  reply.writeUInt32BE(errno, 4)
  cookie.copy(reply, 8)
  return reply
}
