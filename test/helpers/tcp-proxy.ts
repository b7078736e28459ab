import { createServer, connect, type AddressInfo, type Socket } from 'node:net'

/** A TCP forwarder on loopback whose network can be cut (every connection reset, new ones refused) and restored. */
export interface TcpProxy {
  port: number
  cut(): void
  restore(): void
  close(): Promise<void>
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  let down = false
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  const server = createServer((client) => {
    track(client)
    if (down) return void client.destroy()
    const upstream = connect(target)
    track(upstream)
    client.pipe(upstream).pipe(client)
    const both = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('close', both)
    upstream.on('close', both)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host: '127.0.0.1', port: 0 }, resolve)
  })
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      down = true
      for (const socket of sockets) socket.resetAndDestroy()
    },
    restore() {
      down = false
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
