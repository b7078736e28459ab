// Bodies over the limit get their 413 before the connection is reset (issue 22, item 8). Such a
// body is refused as soon as its size is known (its Content-Length, or a chunked body passing
// the limit), while the client is still sending it: the answer goes out at once, the device
// reads and drops the rest (up to LINGER_BYTES), and only a client sending more than that has
// the connection closed under it, long after the status reached it.
import { request as httpRequest } from 'node:http'
import net from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { MAX_IMAGE_BYTES } from '../image/index.js'
import { LINGER_BYTES } from '../gateway/exchange.js'
import { runHemd } from './helpers/hemd-process.js'
import { rawExchange, requestHead } from './helpers/raw-http.js'

interface Outcome {
  status: number
  error: string | undefined
}

/** The way an ordinary client sends a body: all of it, not waiting for an answer; the answer read whole. */
function post(url: string, headers: Record<string, string | number>, body: Buffer): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, error: (JSON.parse(text) as { error?: string }).error }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const uploadHeaders = (length: number) => ({
  'content-type': 'application/octet-stream',
  'content-length': length,
  'content-disposition': 'attachment; filename="firmware.bin"',
})

t.test('over the limit, still sending: the 413 arrives, every time', async (t) => {
  const root = t.testdir()
  // The device in a process of its own, as clients meet it: a close under a client still sending
  // lost about one answer in six.
  const device = await runHemd(t, ['--data', join(root, 'data')])
  const image = Buffer.alloc(MAX_IMAGE_BYTES + 1, 7)
  const outcomes = new Set<string>()
  for (let i = 0; i < 20; i++) {
    const outcome = await post(`${device.httpUrl}/api/system/upgrade/upload_fw`, uploadHeaders(image.length), image)
      .then((o) => `${o.status} ${o.error}`)
      .catch((err: NodeJS.ErrnoException) => err.code ?? 'error')
    outcomes.add(outcome)
  }
  t.strictSame(outcomes, new Set(['413 payload_too_large']), 'an upload announced over 16 MiB: 20 of 20 answered')

  const json = Buffer.alloc(4 * 1024 * 1024, 32)
  const chunked = async () => {
    const port = Number(new URL(device.httpUrl).port)
    const head = requestHead('POST', '/api/auth/token', [
      ['Content-Type', 'application/json'],
      ['Transfer-Encoding', 'chunked'],
    ])
    const chunks = []
    for (let at = 0; at < json.length; at += 64 * 1024)
      chunks.push(Buffer.from('10000\r\n'), json.subarray(at, at + 65536), Buffer.from('\r\n'))
    return rawExchange({ port, tls: false }, { steps: [head, ...chunks, Buffer.from('0\r\n\r\n')] })
  }
  for (let i = 0; i < 5; i++) {
    const outcome = await chunked()
    t.match(
      outcome.responses.map((r) => [r.status, JSON.parse(r.body.toString()).error]),
      [[413, 'payload_too_large']],
      `a chunked JSON body passing 7300 bytes, try ${i + 1}`,
    )
    t.notOk(outcome.writeFailed, 'the client sent all of it')
  }
})

t.test('a client sending far more: the status first, then the close', async (t) => {
  const root = t.testdir()
  const device = await runHemd(t, ['--data', join(root, 'data')])
  const port = Number(new URL(device.httpUrl).port)
  const announced = 4 * LINGER_BYTES
  const seen = await new Promise<{ head: string; sentBeforeStatus: number; sent: number }>((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let head = ''
    let sent = 0
    let sentBeforeStatus = -1
    const piece = Buffer.alloc(256 * 1024, 1)
    socket.on('data', (data: Buffer) => {
      head += data.toString('latin1')
      if (sentBeforeStatus === -1) sentBeforeStatus = sent
    })
    socket.on('error', () => undefined)
    socket.on('close', () => resolve({ head, sentBeforeStatus, sent }))
    socket.on('connect', () => {
      const headers = Object.entries(uploadHeaders(announced)).map(([n, v]): [string, string] => [n, String(v)])
      socket.write(requestHead('POST', '/api/system/upgrade/upload_fw', headers))
      // A turn of the event loop after each piece, as a client reading its socket gets: written in one loop,
      // the pieces the kernel takes at once never let the answer be read before the device's close resets it.
      const pump = (): void => {
        if (socket.destroyed) return
        // Everything sent (the device may have read it all, had this client paused): done.
        if (sent >= announced) return void socket.end()
        sent += piece.length
        if (socket.write(piece)) setImmediate(pump)
        else socket.once('drain', pump)
      }
      pump()
    })
  })
  t.match(seen.head, /^HTTP\/1\.1 413 /, 'the status came')
  t.match(seen.head, /"error":"payload_too_large"/, 'with its reason')
  t.ok(seen.sentBeforeStatus < LINGER_BYTES, 'while the client was still sending')
  t.ok(seen.sent < announced, `the device closed the connection after about ${LINGER_BYTES} bytes (${seen.sent} sent)`)
})
