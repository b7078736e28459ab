import { readFile, realpath } from 'node:fs/promises'
import { extname, join, sep } from 'node:path'
import type { CommandReply } from '../protocol/index.js'
import { HttpError } from './errors.js'

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
}

/**
 * What the management app's pages may do: talk to this device only. No inline script or
 * style, no framing, no sniffing: the app's own files are all it runs.
 */
export const STATIC_HEADERS: readonly [string, string][] = [
  [
    'Content-Security-Policy',
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
      "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  ],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cache-Control', 'no-cache'],
]

/**
 * The installed management app (P) at `/`: `GET /` is its `index.html`, any other path a file
 * under its root. A path is decoded once and must stay below the root, by its segments (no
 * `..`, `.`, empty segment, backslash or NUL) and by the file's real path.
 */
export async function staticFile(root: string | undefined, urlPath: string): Promise<CommandReply> {
  if (!root) throw new HttpError(404, 'not_found', 'No such resource')
  const relative = safeRelative(urlPath)
  const path = join(root, relative)
  let real: string
  try {
    real = await realpath(path)
  } catch {
    throw new HttpError(404, 'not_found', 'No such resource')
  }
  const realRoot = await realpath(root)
  if (real !== realRoot && !real.startsWith(realRoot + sep)) throw new HttpError(404, 'not_found', 'No such resource')
  let body: Buffer
  try {
    body = await readFile(real)
  } catch {
    // A directory, or a file that went away with an install in between.
    throw new HttpError(404, 'not_found', 'No such resource')
  }
  return { status: 200, body, contentType: CONTENT_TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream' }
}

function safeRelative(urlPath: string): string {
  let decoded: string
  try {
    decoded = decodeURIComponent(urlPath)
  } catch {
    throw new HttpError(400, 'bad_path', 'The path is not valid percent-encoding')
  }
  const path = decoded.endsWith('/') ? `${decoded}index.html` : decoded
  const segments = path.split('/').slice(1)
  if (!path.startsWith('/') || segments.some((s) => s === '' || s === '.' || s === '..' || /[\0\\]/.test(s))) {
    throw new HttpError(404, 'not_found', 'No such resource')
  }
  return segments.join('/')
}
