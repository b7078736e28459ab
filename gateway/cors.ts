/**
 * Whether a request's `Origin` is allowed by config `origin`:
 * - `*` allows any origin;
 * - `*.domain.tld` allows any origin whose host is a subdomain of domain.tld, at any depth, with
 *   any scheme and port, but not domain.tld itself (as a wildcard certificate would);
 * - anything else must equal the request's Origin, ignoring case (browsers send it lower-cased,
 *   without a path or trailing slash).
 */
export function originAllowed(allowed: string, origin: string): boolean {
  if (allowed === '*') return true
  if (allowed.startsWith('*.')) {
    const host = hostOf(origin)
    return host !== undefined && host.endsWith(allowed.slice(1).toLowerCase())
  }
  // Scheme and host are case-insensitive: a configured `https://App.example` still matches.
  return origin.toLowerCase() === allowed.toLowerCase()
}

/**
 * Whether `origin` is the device's own, as the management app it serves sends it: the scheme the
 * request came over, and the configured hostname, never the request's Host. A DNS-rebinding page
 * sends its own name in both Origin and Host, so matching Host would admit it.
 */
export function deviceOrigin(origin: string, hostname: string, tls: boolean): boolean {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  // Only `scheme://host[:port]`, as a browser sends it: anything more is no origin.
  if (url.origin.toLowerCase() !== origin.toLowerCase()) return false
  return hostname !== '' && url.protocol === (tls ? 'https:' : 'http:') && url.hostname === hostname.toLowerCase()
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).hostname
  } catch {
    return undefined
  }
}

/** Headers of every response to a request whose Origin matched. */
export function corsHeaders(origin: string): [string, string][] {
  return [
    ['Access-Control-Allow-Origin', origin],
    ['Access-Control-Allow-Credentials', 'true'],
    ['Access-Control-Expose-Headers', 'X-Request-Id, Retry-After'],
    ['Vary', 'Origin'],
  ]
}

/** Headers of the 204 answer to `OPTIONS`, with or without an Origin. */
export const preflightHeaders: [string, string][] = [
  ['Access-Control-Allow-Methods', 'GET, POST, DELETE, OPTIONS'],
  ['Access-Control-Allow-Headers', 'Content-Type, Cache-Control, Pragma, Expires, Authorization, Content-Disposition'],
  ['Access-Control-Max-Age', '86400'],
  ['Access-Control-Allow-Credentials', 'true'],
]
