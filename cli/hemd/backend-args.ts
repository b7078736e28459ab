// hemd runs this in its launcher too, which stays small: nothing of bus/ but its types.
import type { BusBackend } from '../../bus/index.js'
import { streamGeneration, UsageError } from '../index.js'

/** A leaf-node URL: it goes into a quoted string of the nats-server configuration, which nothing in it may end. */
const BACKEND_URL = /^(nats|tls):\/\/[^\s"\\]+$/
const JETSTREAM_DOMAIN = /^[A-Za-z0-9_-]{1,64}$/

/** The flags that name the fleet backend, for hemd and hemd bus-config alike. */
export const BACKEND_OPTIONS = {
  backend: { type: 'string' },
  'backend-domain': { type: 'string' },
  'stream-generation': { type: 'string' },
} as const

export interface BackendValues {
  backend?: string | undefined
  'backend-domain'?: string | undefined
  'stream-generation'?: string | undefined
}

/** The backend the flags name (domain `hem` by default, stream generation 1), or undefined without --backend. */
export function parseBackendArgs(values: BackendValues): BusBackend | undefined {
  const { backend: url, 'backend-domain': domain = 'hem', 'stream-generation': generation } = values
  if (url === undefined) {
    if (values['backend-domain'] !== undefined || generation !== undefined)
      throw new UsageError('--backend-domain and --stream-generation go with --backend')
    return undefined
  }
  // It may hold the leaf user's password: never repeated.
  if (!BACKEND_URL.test(url))
    throw new UsageError('--backend must be a nats:// or tls:// URL without spaces, quotes or backslashes')
  if (!JETSTREAM_DOMAIN.test(domain))
    throw new UsageError(
      `--backend-domain must be a JetStream domain name (letters, digits, _ and -), not ${domain.slice(0, 64)}`,
    )
  const number = streamGeneration(generation)
  return { url, domain, ...(number > 1 ? { generation: number } : {}) }
}
