/**
 * The journal mirror, as the eventstore's read model carries it and `GET /api/system/status` shows
 * it (on a device given a fleet backend only).
 * - `off`: the owner does not trust the backend (`trusted_backend`): nothing leaves the device.
 * - `mirroring`: the stream holds the journal up to its last durable record, or is catching up.
 * - `unreachable`: the backend cannot be reached now; the mirror retries and loses nothing.
 * - `mismatch`: the stream does not continue this journal (a message the device did not publish):
 *   nothing more is published to it until the operator starts the stream's next generation.
 * - `rollback`: the stream holds a record the device signed that its journal no longer has: the
 *   device's data went back to an older state. fls_state 0x08; nothing more is published to it.
 */
export interface MirrorStatus {
  state: (typeof MIRROR_STATES)[number]
  /** The JetStream stream of the generation mirrored to. */
  stream: string
  /** What does not match (`mismatch`, `rollback`): the stream message and the journal record. */
  detail?: string
  /**
   * How far the stream is behind the journal's durable records. Known once the mirror has read the stream's last
   * record; absent before, and while `off`.
   */
  lag?: MirrorLag
}

export interface MirrorLag {
  /** Durable records the stream does not hold yet. */
  records: number
  /** The journal time (Unix seconds) of the oldest of them; absent when there is none. */
  oldest?: number
}

/** Every state of the mirror, in the order above. */
export const MIRROR_STATES = ['off', 'mirroring', 'unreachable', 'mismatch', 'rollback'] as const
