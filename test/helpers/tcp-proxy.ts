import { createServer, connect, type AddressInfo, type Socket } from 'node:net'

/**
 * A TCP forwarder on loopback whose network can be cut (every connection reset, new ones refused) and restored; given
 * several targets, each new connection goes to the next one in turn (round robin: "one name" for several servers).
 */
export interface TcpProxy {
  port: number
  cut(): void
  restore(): void
  close(): Promise<void>
}

type Target = { host: string; port: number }

export async function startTcpProxy(target: Target | Target[]): Promise<TcpProxy> {
  const targets = Array.isArray(target) ? target : [target]
  let turn = 0
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
    const upstream = connect(targets[turn++ % targets.length]!)
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
