import { open, rename } from 'node:fs/promises'
import { join } from 'node:path'
import uWS, { type HttpResponse } from 'uWebSockets.js'
import { listenLocal } from './listen-local.js'
import type { ListeningServer, TlsFiles } from './types.js'

/** The chunk hemd's logger reads journal files in (docs/api.md, The audit log over the API). */
const CHUNK = 128 * 1024

/**
 * Baseline of the log file download: bare uWS over HTTPS serving one file, read 128 KiB at a time
 * and written as the socket drains with its length announced, as hemd's gateway and logger do,
 * without the token, the bus and the journal.
 */
export function serveDownloadBaseline(tls: TlsFiles, file: string): Promise<ListeningServer> {
  const app = uWS.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile })
  app.get('/*', (res) => {
    const client = { aborted: false, wake: () => {} }
    res.onAborted(() => {
      client.aborted = true
      // A chunk waiting for the socket to drain would wait forever, its file left open.
      client.wake()
    })
    void sendFile(res, file, client).catch(() => {
      if (!client.aborted) res.close()
    })
  })
  return listenLocal(app)
}

interface Client {
  aborted: boolean
  /** Ends the wait for the socket to drain. */
  wake(): void
}

async function sendFile(res: HttpResponse, file: string, client: Client): Promise<void> {
  const handle = await open(file, 'r')
  try {
    const total = (await handle.stat()).size
    let sent = 0
    let first = true
    while (sent < total && !client.aborted) {
      const { bytesRead, buffer } = await handle.read(
        Buffer.allocUnsafe(Math.min(CHUNK, total - sent)),
        0,
        Math.min(CHUNK, total - sent),
        sent,
      )
      if (bytesRead === 0) throw new Error('the file shrank while it was sent')
      if (client.aborted) return
      await writeChunk(res, buffer.subarray(0, bytesRead), total, first, client)
      first = false
      sent += bytesRead
    }
  } finally {
    await handle.close()
  }
}

/** One chunk handed to uWS; resolves once all of it is accepted. */
function writeChunk(res: HttpResponse, chunk: Buffer, total: number, first: boolean, client: Client): Promise<void> {
  return new Promise((resolve) => {
    client.wake = resolve
    let accepted = false
    let base = 0
    res.cork(() => {
      if (first) res.writeStatus('200 OK').writeHeader('Content-Type', 'text/plain')
      base = res.getWriteOffset()
      ;[accepted] = res.tryEnd(chunk, total)
    })
    if (accepted) return resolve()
    res.onWritable((offset) => {
      const [ok, done] = res.tryEnd(chunk.subarray(offset - base), total)
      if (ok || done) resolve()
      return ok
    })
  })
}

/**
 * Baseline of the upload: bare uWS over HTTPS receiving a body and writing it to a file, made
 * durable (fsync) and renamed into place before the answer, as hemd's staging is; without the
 * token, the bus's 256 KiB chunks and the upgrade service.
 */
export function serveUploadBaseline(tls: TlsFiles, dir: string): Promise<ListeningServer> {
  const app = uWS.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile })
  let uploads = 0
  app.post('/*', (res) => {
    let aborted = false
    const part = join(dir, `upload-${uploads++}.part`)
    const opened = open(part, 'w', 0o600)
    let writes: Promise<unknown> = opened
    res.onAborted(() => {
      aborted = true
      // No last chunk will come to close the file.
      writes = writes.then(() => opened.then((handle) => handle.close())).catch(() => undefined)
    })
    let offset = 0
    res.onData((chunk, isLast) => {
      // uWS reuses the chunk's memory once this callback returns.
      const copy = Buffer.from(chunk.slice(0))
      const at = offset
      offset += copy.length
      writes = writes.then(() => opened.then((handle) => handle.write(copy, 0, copy.length, at)))
      if (!isLast) return
      void writes
        .then(() =>
          opened.then(async (handle) => {
            await handle.sync()
            await handle.close()
          }),
        )
        .then(() => rename(part, join(dir, 'upload.img')))
        .then(
          () =>
            !aborted &&
            res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end('{}')),
          () => !aborted && res.cork(() => res.writeStatus('500 Internal Server Error').end()),
        )
    })
  })
  return listenLocal(app)
}
