// The DIAG front's connections (gateway/diag-front.ts), relayed to a real server on a unix socket in uWS's
// place: the PROXY header before the client's first byte, the client's bytes mended, the answers back and
// the close; a client that takes nothing of a long answer is dropped; a stopped front takes no connection.
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { DiagFront } from '../gateway/diag-front.js'
import { proxyHeader } from '../gateway/proxy-header.js'
import { silentLogger } from './helpers/logger.js'

/** A server on a unix socket standing where uWS would: each connection as it arrives. */
async function upstream(t: Test): Promise<{ path: string; next(): Promise<net.Socket> }> {
  // Not in t.testdir(): a unix socket's path must stay within 107 bytes.
  const dir = await mkdtemp(join(tmpdir(), 'hemd-front-test-'))
  const path = join(dir, 'up.sock')
  const waiting: net.Socket[] = []
  const server = net.createServer({ allowHalfOpen: true }, (socket) => void waiting.push(socket))
  server.listen(path)
  await once(server, 'listening')
  t.teardown(async () => {
    for (const socket of waiting) socket.destroy()
    server.close()
    await rm(dir, { recursive: true, force: true })
  })
  return {
    path,
    async next() {
      while (waiting.length === 0) await once(server, 'connection')
      return waiting.shift()!
    },
  }
}

async function front(t: Test, path: string, stallMs?: number): Promise<DiagFront> {
  const started = await DiagFront.listen({
    host: '127.0.0.1',
    port: 0,
    upstream: path,
    logger: silentLogger,
    ...(stallMs !== undefined ? { stallMs } : {}),
  })
  t.teardown(async () => {
    started.stopAccepting()
    await started.close()
  })
  return started
}

/** Reads from `socket` until `bytes` have come. */
async function read(socket: net.Socket, bytes: number): Promise<Buffer> {
  let got = Buffer.alloc(0)
  while (got.length < bytes) {
    const [chunk] = (await once(socket, 'data')) as [Buffer]
    got = Buffer.concat([got, chunk])
  }
  return got
}

t.test('the PROXY header, then the mended bytes; the answer back; uWS closing closes the client', async (t) => {
  const up = await upstream(t)
  const { port } = await front(t, up.path)
  const client = net.connect(port, '127.0.0.1')
  await once(client, 'connect')
  client.write('GET /api/diag/test   HTTP/1.1\r\nHost: a\r\n\r\n')
  const twin = await up.next()
  const header = proxyHeader({
    remoteAddress: '127.0.0.1',
    remotePort: client.localPort,
    localAddress: '127.0.0.1',
    localPort: port,
  })!
  const request = 'GET /api/diag/test HTTP/1.1\r\nHost: a\r\n\r\n'
  const got = await read(twin, header.length + request.length)
  t.same(got.subarray(0, header.length), header, "first the client's address and port")
  t.equal(got.subarray(header.length).toString(), request, 'then its request, mended')
  twin.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
  const answer = read(client, 1)
  t.match((await answer).toString(), /^HTTP\/1\.1 200 OK/, 'the answer reaches the client')
  await once(client, 'close')
  t.pass('then the connection closes')
})

t.test('a client that takes nothing of a long answer is dropped after the stall time', async (t) => {
  const up = await upstream(t)
  const { port } = await front(t, up.path, 200)
  const client = net.connect(port, '127.0.0.1')
  await once(client, 'connect')
  client.on('error', () => {})
  client.pause()
  const twin = await up.next()
  // The front's drop resets the connection under the writes.
  twin.on('error', () => {})
  const closed = new Promise((resolve) => twin.once('close', resolve))
  // As much as the front takes: it stops taking once the client's side is full.
  const chunk = Buffer.alloc(1 << 20)
  let sent = 0
  const writing = (async () => {
    while (!twin.destroyed && sent < 256 * chunk.length) {
      sent += chunk.length
      if (!twin.write(chunk)) await Promise.race([once(twin, 'drain').catch(() => undefined), closed])
    }
  })()
  await closed
  await writing
  t.ok(sent < 256 * chunk.length, `dropped after ${sent >> 20} MiB, before the answer was all taken`)
  client.destroy()
})

t.test('stopAccepting refuses new connections at once; close() drops those still open', async (t) => {
  const up = await upstream(t)
  const started = await front(t, up.path)
  const { port } = started
  const idle = net.connect(port, '127.0.0.1')
  await once(idle, 'connect')
  await up.next()
  started.stopAccepting()
  const refused = net.connect(port, '127.0.0.1')
  const [error] = (await once(refused, 'error')) as [NodeJS.ErrnoException]
  t.equal(error.code, 'ECONNREFUSED', 'a new connection is refused')
  await started.close()
  if (!idle.closed) await once(idle, 'close')
  t.pass('the idle one is closed')
})
