import type { Socket } from 'node:net'

/** The peer went away, or the export it used was withdrawn. */
export class PeerGoneError extends Error {
  override readonly name = 'PeerGoneError'
  constructor() {
    super('the connection closed')
  }
}

/**
 * Reads exact byte counts from a socket. It pulls: bytes arrive only as fast as the reader asks,
 * so a client that writes faster than the disk takes them is held back by TCP itself.
 */
export class SocketReader {
  readonly #chunks: Buffer[] = []
  #buffered = 0
  readonly #source: AsyncIterator<Buffer>

  constructor(socket: Socket) {
    this.#source = socket[Symbol.asyncIterator]()
  }

  async read(length: number): Promise<Buffer> {
    while (this.#buffered < length) {
      const next = await this.#source.next().catch(() => ({ done: true as const, value: undefined }))
      if (next.done) throw new PeerGoneError()
      this.#chunks.push(next.value)
      this.#buffered += next.value.length
    }
    const all = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks)
    this.#chunks.length = 0
    const taken = all.subarray(0, length)
    if (all.length > length) this.#chunks.push(all.subarray(length))
    this.#buffered = all.length - length
    return taken
  }

  /** Reads and drops `length` bytes, a bounded piece at a time. */
  async skip(length: number, piece: number): Promise<void> {
    for (let left = length; left > 0; left -= piece) await this.read(Math.min(left, piece))
  }
}

/** Writes and waits for the socket to drain when its buffer is full. */
export function send(socket: Socket, bytes: Uint8Array): Promise<void> {
  if (socket.destroyed) return Promise.reject(new PeerGoneError())
  if (socket.write(bytes)) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const settle = (gone: boolean) => {
      socket.off('drain', onDrain)
      socket.off('close', onClose)
      if (gone) reject(new PeerGoneError())
      else resolve()
    }
    const onDrain = () => settle(false)
    const onClose = () => settle(true)
    socket.on('drain', onDrain)
    socket.on('close', onClose)
  })
}
