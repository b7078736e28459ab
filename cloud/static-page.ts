import { readdir, readFile } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { CloudReply, CloudRoute } from './types.js'

/** Where the web authenticator's page is served: the broker's own origin, so that it talks to that broker only. */
export const PAGE_PATH = '/authenticator/'

/**
 * The page may run its own files and talk to its own origin's broker, nothing else: no inline script or style, no
 * framing, no other origin (a pairing link to another broker is refused by the page, and by `connect-src`).
 * The camera's stream is handed to the video element as an object, which no CSP directive governs.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Permissions-Policy': 'camera=(self), microphone=(), geolocation=()',
  // Revalidated on each visit: a new build of the page is taken at once.
  'Cache-Control': 'no-cache',
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

/** The page as deploy/setup.sh builds it (deploy/build-authapp.ts), beside this package's dist/. */
export const BUILT_PAGE = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../dist-authapp/' : '../../dist-authapp/', import.meta.url),
)

/** A built page's files: a handful, small. More than this is not a page built by deploy/build-authapp.ts. */
const MAX_FILES = 16
const MAX_BYTES = 4 * 1024 * 1024

/** A directory that is not a built page. */
export class StaticPageError extends Error {
  override readonly name = 'StaticPageError'
}

interface PageFile {
  bytes: Uint8Array
  type: string
}

/**
 * The page's routes: `GET|HEAD /authenticator/` (its index.html) and `/authenticator/<file>`, each a file of `dir`
 * read once, here. A request names a file of that list or gets 404: no path reaches the file system, so no path can
 * leave the directory. `/authenticator` is sent to `/authenticator/`, where the page's relative links resolve.
 */
export async function staticPageRoutes(dir: string): Promise<CloudRoute[]> {
  const files = await readPage(dir)
  if (!files.has('index.html')) throw new StaticPageError(`${dir} has no index.html: not a built page`)
  const serve = (name: string | undefined): CloudReply => {
    const file = name === undefined ? undefined : files.get(name)
    if (!file) return { status: 404, body: { error: 'not_found', message: 'No such file of the page' } }
    return { status: 200, body: file.bytes, headers: { ...PAGE_HEADERS, 'Content-Type': file.type } }
  }
  const bare = PAGE_PATH.slice(0, -1)
  return [
    { method: 'GET', pattern: bare, handler: () => Promise.resolve(redirect(PAGE_PATH)) },
    { method: 'GET', pattern: PAGE_PATH, handler: () => Promise.resolve(serve('index.html')) },
    { method: 'GET', pattern: `${PAGE_PATH}:file`, handler: (req) => Promise.resolve(serve(req.params.file)) },
  ]
}

async function readPage(dir: string): Promise<Map<string, PageFile>> {
  const files = new Map<string, PageFile>()
  let total = 0
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const type = CONTENT_TYPES[extname(entry.name).toLowerCase()]
    // Only regular files of a known kind, directly in dir: a link or a folder there is no part of the page.
    if (!entry.isFile() || type === undefined) continue
    const bytes = await readFile(join(dir, entry.name))
    total += bytes.length
    if (files.size >= MAX_FILES || total > MAX_BYTES)
      throw new StaticPageError(`${dir} holds more than a page (${MAX_FILES} files, ${MAX_BYTES} bytes)`)
    files.set(entry.name, { bytes, type })
  }
  return files
}

function redirect(location: string): CloudReply {
  return { status: 308, body: new Uint8Array(), headers: { ...PAGE_HEADERS, Location: location } }
}
