// What an attacker holding hem-cloud's storage reads: every key and value of every JetStream KV bucket, raw, over
// the embedded nats-server's own credentials (the data dir's access file).
import { Kvm } from '@nats-io/kv'
import { connect } from '@nats-io/transport-node'
import { readNatsAccess } from '../../cloud/index.js'

/** Bucket name → key → the value's bytes, as stored. */
export type RawBuckets = Map<string, Map<string, Uint8Array>>

export async function readEveryBucket(cloudDataDir: string): Promise<RawBuckets> {
  const access = await readNatsAccess(cloudDataDir)
  const nc = await connect({ servers: access.url, user: access.user, pass: access.pass })
  try {
    const kvm = new Kvm(nc)
    const all: RawBuckets = new Map()
    for await (const status of kvm.list()) {
      const kv = await kvm.open(status.bucket)
      const values = new Map<string, Uint8Array>()
      for await (const key of await kv.keys()) {
        const entry = await kv.get(key)
        if (entry?.operation === 'PUT') values.set(key, entry.value)
      }
      all.set(status.bucket, values)
    }
    return all
  } finally {
    await nc.close()
  }
}
