import type { HttpResponse } from 'uWebSockets.js'
import type { CommandReply, CommandRequest } from '../protocol/index.js'
import { MAX_IMAGE_BYTES } from '../image/index.js'
import { declaredLength } from './body.js'
import type { ConnectionReads } from './connection-reads.js'
import { HttpError } from './errors.js'
import type { GatewayBus } from '../bus/index.js'
import type { Route } from './types.js'

/** What one bus message carries of an upload: well under nats-server's 1 MiB payload limit. */
export const UPLOAD_CHUNK = 256 * 1024

/** The upload's request headers, copied while uWS's HttpRequest is alive. */
export interface UploadHead {
  contentLength: string
  contentType: string
  disposition: string
  transferEncoding: string
}

type UploadHandler = Extract<Route['handler'], { kind: 'upload' }>

/**
 * The body's length from the headers: 411 without one, 413 above the image limit or without a filename, 400 otherwise
 * wrong.
 */
export function uploadLength(head: UploadHead, handler: UploadHandler): number {
  if (head.transferEncoding !== '' || head.contentLength === '') {
    throw new HttpError(411, 'length_required', 'An upload needs a Content-Length (chunked encoding is not accepted)')
  }
  const length = declaredLength(head.contentLength)
  if (length === undefined) throw new HttpError(400, 'bad_length', 'Content-Length is not a number')
  if (length > MAX_IMAGE_BYTES)
    throw new HttpError(413, 'payload_too_large', `An image is at most ${MAX_IMAGE_BYTES} bytes`)
  if (length === 0) throw new HttpError(400, 'empty_upload', 'The upload is empty')
  if (head.contentType.split(';')[0]!.trim().toLowerCase() !== 'application/octet-stream') {
    throw new HttpError(400, 'bad_content_type', 'An upload is sent as application/octet-stream')
  }
  const disposition = /^\s*([A-Za-z-]+)\s*(?:;|$)/.exec(head.disposition)
  const filename = /;\s*filename\s*=\s*(?:"([^"\\]*)"|([^;\s"]+))/i.exec(head.disposition)
  if (!filename)
    throw new HttpError(
      413,
      'no_filename',
      'The upload names no file (Content-Disposition: attachment; filename="...")',
    )
  const name = filename[1] ?? filename[2]!
  if (disposition?.[1]?.toLowerCase() !== 'attachment' || !handler.filenames.includes(name)) {
    throw new HttpError(
      400,
      'bad_filename',
      `The upload must be Content-Disposition: attachment; filename="${handler.filenames[0]}"`,
    )
  }
  return length
}

/**
 * An upload's body, pulled a chunk at a time. uWS is paused whenever a whole chunk waits, so the
 * gateway holds at most about one chunk of any upload, however large, and the client is slowed
 * by TCP to the pace the device stores at. Must be created inside the uWS request handler.
 */
export class UploadBody {
  private pending: Buffer[] = []
  private size = 0
  private last = false
  private gone = false
  private dropping = false
  private wake: (() => void) | undefined

  constructor(
    res: Pick<HttpResponse, 'onData'>,
    /** The connection's reads: paused while a whole chunk waits, held once the body is in. */
    private readonly reads: ConnectionReads,
  ) {
    res.onData((chunk, isLast) => {
      this.last ||= isLast
      if (isLast) reads.hold()
      if (!this.dropping) {
        // uWS neuters the chunk when this callback returns.
        const copy = Buffer.from(chunk.slice(0))
        this.pending.push(copy)
        this.size += copy.length
        if (this.size >= UPLOAD_CHUNK && !this.last) reads.pause()
      }
      this.wake?.()
    })
  }

  /** Reads what is left of the body and drops it; resolves once it is all in, or the client is gone. */
  async dropRest(): Promise<void> {
    this.dropping = true
    this.pending = []
    this.size = 0
    this.reads.resume()
    await this.until(() => this.last)
  }

  private async until(done: () => boolean): Promise<void> {
    while (!this.gone && !done()) {
      await new Promise<void>((resolve) => (this.wake = resolve))
      this.wake = undefined
    }
  }

  /** Whether the client went away: an upload it cannot hear the end of is not ended. */
  get abandoned(): boolean {
    return this.gone
  }

  /** The client went away: whoever waits for the next chunk gets none. */
  abandon(): void {
    this.gone = true
    this.wake?.()
  }

  /** The next chunk (at most UPLOAD_CHUNK bytes) and whether it ends the body; undefined when the client is gone. */
  async next(): Promise<{ data: Buffer; last: boolean } | undefined> {
    await this.until(() => this.size >= UPLOAD_CHUNK || this.last)
    if (this.gone) return undefined
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending)
    const data = all.subarray(0, UPLOAD_CHUNK)
    const rest = all.subarray(data.length)
    this.pending = rest.length > 0 ? [rest] : []
    this.size = rest.length
    if (this.size < UPLOAD_CHUNK) this.reads.resume()
    return { data, last: this.last && this.size === 0 }
  }
}

/**
 * Streams an upload to the service behind the route: `begin` (with the length), the chunks in
 * order (each acknowledged before the next is read), then `upload_end`. `complete` says whether
 * the whole body was read.
 */
export async function forwardUpload(
  bus: GatewayBus,
  handler: UploadHandler,
  base: CommandRequest,
  length: number,
  body: UploadBody,
  /** Each command's deadline budget: every chunk is one command, the upload as a whole has no bound here. */
  budgetMs: number,
): Promise<{ reply: CommandReply | undefined; complete: boolean }> {
  const begun = await bus.request(handler.service, handler.begin, { ...base, body: { size: length } }, budgetMs)
  if (begun.status !== 200) return { reply: begun, complete: false }
  const upload = (begun.body as { upload: string }).upload
  const abort = () =>
    bus.request(handler.service, 'upload_abort', { ...base, body: { upload } }, budgetMs).catch(() => undefined)
  let offset = 0
  try {
    for (;;) {
      const piece = await body.next()
      if (!piece) {
        await abort()
        return { reply: undefined, complete: false }
      }
      if (piece.data.length > 0) {
        const stored = await bus.request(
          handler.service,
          'upload_chunk',
          { ...base, body: { upload, offset, data: piece.data } },
          budgetMs,
        )
        if (stored.status !== 200) {
          // The service may still hold the upload (a refused token, a chunk it was too slow for): it must not linger.
          await abort()
          return { reply: stored, complete: piece.last }
        }
        offset += piece.data.length
      }
      if (piece.last) break
    }
    if (body.abandoned) {
      await abort()
      return { reply: undefined, complete: false }
    }
    const end = await bus.request(handler.service, 'upload_end', { ...base, body: { upload } }, budgetMs)
    // An end the journal did not take leaves the upload open.
    if (end.status !== 200) await abort()
    return { reply: end, complete: true }
  } catch (err) {
    await abort()
    throw err
  }
}
