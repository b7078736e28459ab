import type { JsonBucket } from './json-bucket.js'
import { keyName } from './notify-fields.js'
import { NotifyRefusal } from './notify-refusal.js'

/**
 * Nonces of proofs already taken, each good once: `spend` writes it with KV create, so of two instances
 * racing on one nonce exactly one succeeds. The bucket's TTL outlives the window in which the nonce would
 * be accepted at all.
 */
export class NonceBook {
  constructor(private readonly bucket: JsonBucket<number>) {}

  /** Takes `nonce` of `subject` (an eid or an aid); a 401 when it was seen before. */
  async spend(subject: Uint8Array, nonce: Uint8Array, now: number): Promise<void> {
    if (!(await this.bucket.create(`${keyName(subject)}.${keyName(nonce)}`, now))) {
      throw new NotifyRefusal(401, 'nonce_replayed', 'this nonce was used before')
    }
  }
}
