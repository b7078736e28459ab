import { decodeBase64 } from './base64.js'
import { KeyAttributeError } from './key-types.js'

/** Anonymous search needs a prefix this long (decoded), so that it cannot enumerate the repository. */
export const ANONYMOUS_PREFIX_BYTES = 6

/** A `descr` search pattern: `^b64` prefix, `b64$` suffix, or a plain substring. */
export function parseDescrPattern(value: unknown): { anchor: 'prefix' | 'suffix' | 'any'; bytes: Uint8Array } {
  if (typeof value !== 'string') throw new KeyAttributeError('`descr` must be a base64 pattern')
  const anchor = value.startsWith('^') ? 'prefix' : value.endsWith('$') ? 'suffix' : 'any'
  const text = anchor === 'prefix' ? value.slice(1) : anchor === 'suffix' ? value.slice(0, -1) : value
  const bytes = decodeBase64(text)
  if (!bytes || bytes.length === 0 || bytes.length > 64)
    throw new KeyAttributeError('`descr` must be base64 of 1 to 64 bytes, optionally with a leading ^ or trailing $')
  return { anchor, bytes }
}

/** Whether a search body may go without a token: `^`-anchored, at least 6 decoded bytes, and allowed by config. */
export function anonymousSearchAllowed(
  body: Readonly<Record<string, unknown>> | undefined,
  allowKeysearch: boolean,
): boolean {
  if (!allowKeysearch) return false
  try {
    const pattern = parseDescrPattern(body?.descr)
    return pattern.anchor === 'prefix' && pattern.bytes.length >= ANONYMOUS_PREFIX_BYTES
  } catch {
    return false
  }
}
