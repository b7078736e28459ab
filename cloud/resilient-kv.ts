import { AsyncLocalStorage } from 'node:async_hooks'
import type { KV, KvEntry } from '@nats-io/kv'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * How long one state operation is tried again while the cluster cannot answer (a lost node, a leader being elected,
 * the connection moving to another server): less than the front's 10 s deadline, so that a request that still finds
 * no state ends with the cloud's own 503 and its Retry-After.
 */
const STATE_RETRY_MS = 8_000
/** One try's limit: a request sent to a server just lost waits no longer for its answer. */
export const STATE_TRY_MS = 2_000

/**
 * When the request being served must have its answer (ms since the epoch, set by the front): a route's several
 * operations share it, so that their retries together stop in time for the cloud's own 503.
 */
export const requestDeadline = new AsyncLocalStorage<number>()

/** The cloud's state did not answer within STATE_RETRY_MS: the front answers 503, the client tries again. */
export class StateUnavailableError extends Error {
  override readonly name = 'StateUnavailableError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** A try that had no answer within STATE_TRY_MS (the client's own limit for a publish is longer): tried again. */
class TryTimeoutError extends Error {
  override readonly name = 'TimeoutError'
}

/** `op`, given up after STATE_TRY_MS: a late answer is dropped (a write it applied, the next try finds). */
async function oneTry<T>(op: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TryTimeoutError(`no answer within ${STATE_TRY_MS} ms`)), STATE_TRY_MS)
  })
  try {
    return await Promise.race([op(), late])
  } finally {
    clearTimeout(timer)
  }
}

/** Errors of the connection and of JetStream that end when the cluster has its quorum and leaders again. */
const TRANSIENT = new Set(['TimeoutError', 'NoResponders', 'RequestError', 'ConnectionError', 'JetStreamNotEnabled'])

/** Whether `error` says "not now" rather than "no": a request lost, no responder, JetStream's 503. */
function isTransient(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  if (TRANSIENT.has(error.name)) return true
  // JetStream's API error and a publish's status carry the HTTP-like code: 503 no leader or quorum, 408 timed out.
  const status = error.name === 'JetStreamApiError' ? (error as { status?: unknown }).status : undefined
  const code = error.name === 'JetStreamStatusError' ? (error as { code?: unknown }).code : undefined
  return [status, code].some((c) => c === 503 || c === 408)
}

/**
 * `op`, tried again on transient errors with a growing pause until `budgetMs` have passed or the request's deadline
 * comes; then StateUnavailableError.
 */
export async function retryTransient<T>(op: () => Promise<T>, budgetMs = STATE_RETRY_MS): Promise<T> {
  const deadline = Math.min(Date.now() + budgetMs, requestDeadline.getStore() ?? Infinity)
  for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
    try {
      return await oneTry(op)
    } catch (error) {
      if (!isTransient(error)) throw error
      if (Date.now() + pause >= deadline)
        throw new StateUnavailableError("the cloud's state did not answer in time", { cause: error })
    }
    await sleep(pause)
  }
}

/** JetStream's "wrong last sequence": the key holds another revision than the write named. */
export function isWrongRevision(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  return (
    code === 10071 ||
    code === 10164 ||
    (error instanceof Error && /wrong last sequence|key exists/i.test(error.message))
  )
}

type Payload = string | Uint8Array

/**
 * `kv` whose reads and writes ride out a lost node (retryTransient). A compare-and-set write whose first try was
 * applied but whose answer was lost finds its own value there on the next try: that is its success, not a lost race,
 * so a retried write is never reported as undone nor applied twice. `keys` is left as it is: its caller iterates,
 * and retries the whole listing.
 */
export function resilientKv(kv: KV, budgetMs = STATE_RETRY_MS): KV {
  const again = <T>(op: () => Promise<T>) => retryTransient(op, budgetMs)
  const compareAndSet = async (key: string, data: Payload, write: () => Promise<number>): Promise<number> => {
    let tries = 0
    try {
      return await again(() => (tries++, write()))
    } catch (error) {
      if (tries < 2 || !isWrongRevision(error)) throw error
      const entry: KvEntry | null = await again(() => kv.get(key))
      const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data
      if (entry?.operation === 'PUT' && Buffer.from(entry.value).equals(Buffer.from(bytes))) return entry.revision
      throw error
    }
  }
  const wrapped: Partial<KV> = {
    get: (key, opts) => again(() => kv.get(key, opts)),
    put: (key, data, opts) => again(() => kv.put(key, data, opts)),
    delete: (key, opts) => again(() => kv.delete(key, opts)),
    purge: (key, opts) => again(() => kv.purge(key, opts)),
    create: (key, data, markerTTL) => compareAndSet(key, data, () => kv.create(key, data, markerTTL)),
    update: (key, data, version, timeout) => compareAndSet(key, data, () => kv.update(key, data, version, timeout)),
  }
  return new Proxy(kv, {
    get(target, property, receiver) {
      if (typeof property === 'string' && property in wrapped) return wrapped[property as keyof KV]
      const value: unknown = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
