import type { Endpoint } from '../../runtime/index.js'
import { UsageError } from '../index.js'

export { UsageError }

export function parseEndpoint(flag: string, text: string): Endpoint {
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text)
  const port = Number(match?.[2])
  if (!match || port > 65535) throw new UsageError(`${flag} must be HOST:PORT (port 0-65535), not ${text}`)
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port }
}
