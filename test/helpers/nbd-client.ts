import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import {
  ClientFlag,
  Command,
  Info,
  NBD_MAGIC,
  Option,
  OPTION_MAGIC,
  OPTION_REPLY_MAGIC,
  OptionReply,
  REQUEST_MAGIC,
  SIMPLE_REPLY_MAGIC,
} from '../../actors/storage/nbd-protocol.js'
import { SocketReader } from '../../actors/storage/socket-io.js'

export interface OptionAnswer {
  type: number
  data: Buffer
}

/**
 * A small NBD client that can also misbehave, for the protocol's edges; the real clients
 * (libnbd's nbdinfo and nbdcopy) are the differential check.
 */
export class NbdTestClient {
  private readonly reader: SocketReader
  private cookie = 0n

  private constructor(private readonly socket: Socket) {
    this.reader = new SocketReader(socket)
    socket.on('error', () => undefined)
  }

  /** Connects and answers the greeting with `flags` (fixed newstyle, no zeroes by default). */
  static async connect(
    address: string,
    flags: number = ClientFlag.FIXED_NEWSTYLE | ClientFlag.NO_ZEROES,
  ): Promise<NbdTestClient> {
    const match = /^(.*):(\d+)$/.exec(address)
    const socket = match
      ? connect({ host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) })
      : connect({ path: address })
    await once(socket, 'connect')
    const client = new NbdTestClient(socket)
    const greeting = await client.reader.read(18)
    if (greeting.readBigUInt64BE(0) !== NBD_MAGIC || greeting.readBigUInt64BE(8) !== OPTION_MAGIC)
      throw new Error('not an NBD server')
    const answer = Buffer.alloc(4)
    answer.writeUInt32BE(flags)
    socket.write(answer)
    return client
  }

  sendOption(option: number, data: Buffer = Buffer.alloc(0), declaredLength = data.length): void {
    const head = Buffer.alloc(16)
    head.writeBigUInt64BE(OPTION_MAGIC, 0)
    head.writeUInt32BE(option, 8)
    head.writeUInt32BE(declaredLength, 12)
    this.socket.write(Buffer.concat([head, data]))
  }

  /** Sends an option and collects its replies up to the ACK or an error. */
  async option(option: number, data?: Buffer): Promise<OptionAnswer[]> {
    this.sendOption(option, data)
    return this.replies(option)
  }

  async replies(option: number): Promise<OptionAnswer[]> {
    const answers: OptionAnswer[] = []
    for (;;) {
      const head = await this.reader.read(20)
      if (head.readBigUInt64BE(0) !== OPTION_REPLY_MAGIC || head.readUInt32BE(8) !== option)
        throw new Error('bad option reply')
      const answer = { type: head.readUInt32BE(12), data: await this.reader.read(head.readUInt32BE(16)) }
      answers.push(answer)
      if (answer.type === OptionReply.ACK || answer.type >= OptionReply.ERR_UNSUP) return answers
    }
  }

  /** NBD_OPT_GO: the export's size and transmission flags, or the error reply's type. */
  async go(
    name: string,
    wants: number[] = [],
  ): Promise<{ size: number; flags: number; blockSizes?: number[] } | { error: number; message: string }> {
    const data = Buffer.alloc(6 + Buffer.byteLength(name) + 2 * wants.length)
    data.writeUInt32BE(Buffer.byteLength(name), 0)
    data.write(name, 4)
    data.writeUInt16BE(wants.length, 4 + Buffer.byteLength(name))
    wants.forEach((want, i) => data.writeUInt16BE(want, 6 + Buffer.byteLength(name) + 2 * i))
    const answers = await this.option(Option.GO, data)
    const last = answers.at(-1)!
    if (last.type !== OptionReply.ACK) return { error: last.type, message: last.data.toString() }
    const infos = answers.filter((a) => a.type === OptionReply.INFO).map((a) => a.data)
    const exportInfo = infos.find((data) => data.readUInt16BE(0) === Info.EXPORT)!
    const sizes = infos.find((data) => data.readUInt16BE(0) === Info.BLOCK_SIZE)
    return {
      size: Number(exportInfo.readBigUInt64BE(2)),
      flags: exportInfo.readUInt16BE(10),
      ...(sizes ? { blockSizes: [sizes.readUInt32BE(2), sizes.readUInt32BE(6), sizes.readUInt32BE(10)] } : {}),
    }
  }

  sendRequest(type: number, offset: number, length: number, payload?: Buffer): bigint {
    const request = Buffer.alloc(28)
    const cookie = ++this.cookie
    request.writeUInt32BE(REQUEST_MAGIC, 0)
    request.writeUInt16BE(type, 6)
    request.writeBigUInt64BE(cookie, 8)
    request.writeBigUInt64BE(BigInt(offset), 16)
    request.writeUInt32BE(length, 24)
    this.socket.write(payload ? Buffer.concat([request, payload]) : request)
    return cookie
  }

  /** The errno of the next simple reply, and for a successful read its `length` bytes. */
  async reply(cookie: bigint, dataLength = 0): Promise<{ errno: number; data?: Buffer }> {
    const head = await this.reader.read(16)
    if (head.readUInt32BE(0) !== SIMPLE_REPLY_MAGIC || head.readBigUInt64BE(8) !== cookie)
      throw new Error('bad simple reply')
    const errno = head.readUInt32BE(4)
    return errno === 0 && dataLength > 0 ? { errno, data: await this.reader.read(dataLength) } : { errno }
  }

  async read(offset: number, length: number): Promise<{ errno: number; data?: Buffer }> {
    return this.reply(this.sendRequest(Command.READ, offset, length), length)
  }

  async write(offset: number, payload: Buffer): Promise<number> {
    return (await this.reply(this.sendRequest(Command.WRITE, offset, payload.length, payload))).errno
  }

  async command(type: number): Promise<number> {
    return (await this.reply(this.sendRequest(type, 0, 0))).errno
  }

  /** Resolves true when the server ends the connection, sending nothing more, before `ms`. */
  async endsWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    const ended = await Promise.race([
      this.reader.read(1).then(
        () => false,
        () => true,
      ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
    ])
    clearTimeout(timer)
    return ended
  }

  close(): void {
    this.socket.destroy()
  }
}
