import { createHash } from 'node:crypto'
import { extname } from 'node:path'
import type { WebrootStore } from '../hal/index.js'
import type { ContentEncoding } from './accept-encoding.js'
import { compress } from './compress.js'
import { appFilePath, staticFile } from './static-site.js'

/** Formats that are compressed already: another pass costs time and saves nothing. */
const PRECOMPRESSED = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp', '.woff', '.woff2', '.wasm'])

/** A file of the app as it goes out in one encoding. */
export interface AppFileAnswer {
  body: Buffer
  contentType: string
  /** `identity` when the compression saved nothing (or the format is compressed already). */
  encoding: ContentEncoding
  /** Strong: the file's SHA-256 (base64url, 132 bits), and its encoding but for identity. */
  etag: string
}

/** One file of the installed app: each encoding made the first time it is asked for, then kept. */
class AppFile {
  private readonly encoded = new Map<ContentEncoding, Promise<AppFileAnswer>>()
  private readonly identity: AppFileAnswer

  constructor(
    body: Buffer,
    contentType: string,
    private readonly compressible: boolean,
  ) {
    const hash = createHash('sha256').update(body).digest('base64url').slice(0, 22)
    this.identity = { body, contentType, encoding: 'identity', etag: `"${hash}"` }
  }

  as(encoding: ContentEncoding): Promise<AppFileAnswer> {
    if (encoding === 'identity' || !this.compressible) return Promise.resolve(this.identity)
    let answer = this.encoded.get(encoding)
    if (!answer) {
      this.encoded.set(encoding, (answer = this.encode(encoding)))
      answer.catch(() => this.encoded.delete(encoding))
    }
    return answer
  }

  private async encode(encoding: 'br' | 'gzip'): Promise<AppFileAnswer> {
    const { body, contentType, etag } = this.identity
    const compressed = await compress(body, encoding)
    if (compressed.length >= body.length) return this.identity
    return { body: compressed, contentType, encoding, etag: `${etag.slice(0, -1)}-${encoding}"` }
  }
}

/**
 * The installed app's files (`GET /<file>`), read, hashed and compressed once per install rather than per request:
 * an app never changes once current (an `install_ui` makes a new directory current), so all of it is kept in memory
 * until another becomes current, then dropped. Bounded by the app itself: its image holds at most 16 MiB of files,
 * and a file's compressed forms are kept only when smaller. Only files that exist are kept, by their path as decoded
 * (a path that is not a file costs its lookup every time, and nothing here).
 */
export class AppFiles {
  private install: { sha256: string; files: Map<string, Promise<AppFile>> } | undefined

  constructor(private readonly webroot: Pick<WebrootStore, 'current'> | undefined) {}

  /** The file at `urlPath` in `encoding` (or identity); HttpError 404 when there is none. */
  async answer(urlPath: string, encoding: ContentEncoding): Promise<AppFileAnswer> {
    const relative = appFilePath(urlPath)
    const current = this.webroot?.current()
    if (current?.sha256 !== this.install?.sha256) this.install = current && { sha256: current.sha256, files: new Map() }
    const files = this.install?.files
    let file = files?.get(relative)
    if (!file) {
      file = this.read(current?.dir, relative)
      files?.set(relative, file)
      file.catch(() => files?.delete(relative))
    }
    return (await file).as(encoding)
  }

  private async read(root: string | undefined, relative: string): Promise<AppFile> {
    const { body, contentType } = await staticFile(root, relative)
    return new AppFile(body, contentType, !PRECOMPRESSED.has(extname(relative).toLowerCase()))
  }
}
