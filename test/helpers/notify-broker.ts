// The notification broker's routes against a nats-server with JetStream of the test's own, called directly
// (a CloudRequest in, a CloudReply out) on a clock the test moves.

import { join } from 'node:path'
import { Kvm } from '@nats-io/kv'
import { connect } from '@nats-io/transport-node'
import type { Test } from 'tap'
import { jetStreamState, type CloudReply, type CloudRequest, type CloudRoute } from '../../cloud/index.js'
import { notifyRoutes, type NotifyOptions } from '../../cloud/notify/notify-routes.js'
import { type ExternalNats, startNats } from './nats.js'

/** Noon UTC, mid-day: a test that crosses a day boundary moves the clock there itself. */
export const T0 = Date.UTC(2026, 10, 29, 12) / 1000
export const MASTER = new Uint8Array(32).fill(7)
export const PUBLIC_URL = 'https://api.encedo.com'

export interface BrokerUnderTest {
  /** The cloud's clock (Unix seconds), read by every call. */
  clock: { now: number }
  call(method: CloudRequest['method'], path: string, body?: unknown, ip?: string): Promise<CloudReply>
  /** Another instance of the cloud on the same JetStream (its own connection, same master secret). */
  another(): Promise<BrokerUnderTest>
  /** Every KV bucket of the server: name → key → raw value (what an attacker holding the buckets reads). */
  rawBuckets(): Promise<Map<string, Map<string, string>>>
}

/** A route's params when `path` fits its pattern, else undefined. */
function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/')
  const got = path.split('/')
  if (want.length !== got.length) return undefined
  const params: Record<string, string> = {}
  for (const [i, segment] of want.entries()) {
    if (segment.startsWith(':')) params[segment.slice(1)] = decodeURIComponent(got[i]!)
    else if (segment !== got[i]) return undefined
  }
  return params
}

function caller(routes: CloudRoute[], clock: { now: number }): BrokerUnderTest['call'] {
  return async (method, path, body, ip = '192.0.2.10') => {
    for (const route of routes) {
      const params = route.method === method ? match(route.pattern, path) : undefined
      if (params) return route.handler({ method, path, params, body, ip, now: clock.now })
    }
    return { status: 404, body: { error: 'no_route' } }
  }
}

export async function brokerUnderTest(t: Test, options: Partial<NotifyOptions> = {}): Promise<BrokerUnderTest> {
  // The server stops before tap removes its folder: a test dir made after the first teardown goes after it.
  let nats: ExternalNats | undefined
  t.teardown(() => nats?.stop())
  const dir = t.testdir()
  nats = await startNats(dir, -1, `jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }\n`)
  const clock = { now: T0 }
  const instance = async (): Promise<BrokerUnderTest> => {
    const nc = await connect({ servers: nats!.url })
    t.teardown(() => nc.close())
    const routes = notifyRoutes({
      ...{ state: jetStreamState(nc), masterSecret: MASTER, publicUrl: PUBLIC_URL, testMode: true },
      ...options,
    })
    return {
      clock,
      call: caller(routes, clock),
      another: instance,
      rawBuckets: async () => {
        const kvm = new Kvm(nc)
        const all = new Map<string, Map<string, string>>()
        for await (const status of kvm.list()) {
          const kv = await kvm.open(status.bucket)
          const values = new Map<string, string>()
          for await (const key of await kv.keys()) values.set(key, (await kv.get(key))?.string() ?? '')
          all.set(status.bucket, values)
        }
        return all
      },
    }
  }
  return instance()
}
