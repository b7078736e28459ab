import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { resilientKv, retryTransient, STATE_TRY_MS } from './resilient-kv.js'
import type { BucketOptions, CloudState } from './types.js'

/**
 * The cloud's buckets on a JetStream cluster, `replicas` copies each (1 on a lone server, 3 on a
 * cluster of three). Opened once per process; every instance of the cloud opens the same ones. Each is
 * resilientKv: a lost node or a leader election makes an operation wait for the cluster, not fail.
 */
export function jetStreamState(nc: NatsConnection, replicas = 1): CloudState {
  const kvm = new Kvm(nc)
  const open = new Map<string, Promise<KV>>()
  return {
    bucket(name: string, options: BucketOptions = {}): Promise<KV> {
      let kv = open.get(name)
      if (!kv) {
        // Reads through the stream's leader: a direct get may be answered by a replica that has not yet applied a
        // write the cluster acknowledged, and a pairing written a moment before a node loss would read as missing.
        const config = {
          replicas,
          history: 1,
          timeout: STATE_TRY_MS,
          allow_direct: false,
          ...(options.ttlMs ? { ttl: options.ttlMs } : {}),
        }
        kv = retryTransient(() => kvm.create(`hem-cloud-${name}`, config)).then((opened) => resilientKv(opened))
        // A failed open is tried again on the next use: the cluster may have been electing a leader.
        kv.catch(() => open.delete(name))
        open.set(name, kv)
      }
      return kv
    },
  }
}
