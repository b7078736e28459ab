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

/** The app's own settings from the device (not a file of the app): its cloud, which only hemd's operator sets. */
export const APP_CONFIG_PATH = '/app-config.json'

/**
 * What the management app's pages may do: talk to this device only, and to the family's cloud when the
 * device names one (`appCloud`, hemd --cloud: the broker answers CORS `*`, contract §3.0). No inline script
 * or style, no framing, no sniffing: the app's own files are all it runs.
 */
export function staticHeaders(appCloud?: string): [string, string][] {
  const connect = appCloud === undefined ? "'self'" : `'self' ${cloudOrigin(appCloud)}`
  return [
    [
      'Content-Security-Policy',
      `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src ${connect}; ` +
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ],
    ['X-Content-Type-Options', 'nosniff'],
    ['X-Frame-Options', 'DENY'],
    ['Referrer-Policy', 'no-referrer'],
  ]
}

/** The headers of a device that names no cloud. */
export const STATIC_HEADERS: readonly [string, string][] = staticHeaders()

/**
 * `/app-config.json`: `{"cloud": URL | null, "https_port": N | null}`: the device's cloud (hemd --cloud), and the
 * port of its HTTPS listener, where a page loaded over plain HTTP sends its owner before anything secret is typed.
 */
export function appConfigReply(appCloud?: string, httpsPort?: number): CommandReply {
  return {
    status: 200,
    body: { cloud: appCloud === undefined ? null : new URL(appCloud).href, https_port: httpsPort ?? null },
  }
}

/**
 * The origin a CSP source names: only an https URL, or http on loopback (a cloud on the same host),
 * reaches a header; anything else is a configuration error, refused before a page is served.
 */
export function cloudOrigin(appCloud: string): string {
  const url = new URL(appCloud)
  const loopback = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/.test(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new RangeError(`the app's cloud must be an https URL (or http on loopback), not ${url.protocol}`)
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    throw new RangeError("the app's cloud URL carries no credentials, query or fragment")
  return url.origin
}

/**
 * The installed management app (P) at `/`: `GET /` is its `index.html`, any other path a file
 * under its root. A path is decoded once and must stay below the root, by its segments (no
 * `..`, `.`, empty segment, backslash or NUL: `appFilePath`) and by the file's real path.
 * `relative` is what `appFilePath` made of the request's path.
 */
export async function staticFile(
  root: string | undefined,
  relative: string,
): Promise<{ body: Buffer; contentType: string }> {
  if (!root) throw new HttpError(404, 'not_found', 'No such resource')
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
  return { body, contentType: CONTENT_TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream' }
}

/** The file a request's path names, relative to the app's root: HttpError 404 (400) for a path that may name none. */
export function appFilePath(urlPath: string): string {
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
