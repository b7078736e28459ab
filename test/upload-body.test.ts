// The gateway's upload body: pulled a chunk at a time, with uWS paused while a whole
// chunk waits, so what the gateway holds is bounded by the chunk, not by the upload.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import type { HttpResponse } from 'uWebSockets.js'
import { ConnectionReads } from '../gateway/connection-reads.js'
import { UPLOAD_CHUNK, UploadBody } from '../gateway/upload.js'

/** A uWS response that delivers `body` in socket-sized reads, and stops while paused, as uWS does. */
function fakeResponse(body: Buffer, read: number) {
  let onData: ((chunk: ArrayBuffer, isLast: boolean) => void) | undefined
  let paused = false
  let offset = 0
  let resumes = 0
  const pump = () => {
    while (!paused && offset < body.length) {
      const piece = body.subarray(offset, offset + read)
      offset += piece.length
      // uWS hands out an ArrayBuffer it neuters after the callback: give a copy and wipe it after.
      const chunk = piece.buffer.slice(piece.byteOffset, piece.byteOffset + piece.length) as ArrayBuffer
      onData!(chunk, offset === body.length)
      new Uint8Array(chunk).fill(0)
    }
  }
  const res = {
    onData(handler: typeof onData) {
      onData = handler
      setImmediate(pump)
      return res
    },
    pause: () => void (paused = true),
    resume: () => {
      resumes++
      paused = false
      setImmediate(pump)
    },
  }
  return { res: res as unknown as HttpResponse, resumes: () => resumes }
}

t.test('a 16 MiB body arrives whole and in order, never more than a chunk and a read held', async (t) => {
  const body = randomBytes(16 * 1024 * 1024 + 123)
  const read = 64 * 1024
  const { res, resumes } = fakeResponse(body, read)
  const upload = new UploadBody(res, new ConnectionReads(res, () => true))
  const received: Buffer[] = []
  let held = 0
  for (;;) {
    const piece = await upload.next()
    t.ok(piece, 'a piece')
    held = Math.max(held, (upload as unknown as { size: number }).size + piece!.data.length)
    received.push(Buffer.from(piece!.data))
    if (piece!.last) break
    t.ok(piece!.data.length === UPLOAD_CHUNK, 'every piece but the last is a whole chunk')
  }
  t.ok(Buffer.concat(received).equals(body), 'the bytes, in order')
  t.ok(held <= UPLOAD_CHUNK + read, `at most ${held} bytes held (chunk ${UPLOAD_CHUNK} + one read ${read})`)
  t.ok(resumes() >= 60, 'paused and resumed along the way')
})

t.test('a client that goes away ends the wait; a finished response is never resumed', async (t) => {
  const { res, resumes } = fakeResponse(randomBytes(UPLOAD_CHUNK * 3), 1000)
  let live = true
  const upload = new UploadBody(res, new ConnectionReads(res, () => live))
  t.ok(await upload.next())
  live = false
  const before = resumes()
  await upload.next()
  t.equal(resumes(), before, 'no resume once the response is over')
  upload.abandon()
  t.equal(await upload.next(), undefined, 'nothing after the client left')
})
