import { hmacSha256, sameBytes, x25519PublicKey } from '../../protocol/index.js'

/** The three kinds of broker key (contract §3.4.1); a key of one kind is never accepted as another. */
export type SessionKind = 'anonymous' | 'eid' | 'aid'

const KIND_BYTE: Readonly<Record<SessionKind, number>> = { anonymous: 0, eid: 1, aid: 2 }
const LABEL = new TextEncoder().encode('hem-notify-epk')
const DAY = 86_400
/** Derived keys kept in memory; a busy day's set is derived again when the map is cleared. */
const CACHE_LIMIT = 4096

/** The subject of the anonymous key: none. */
export const NO_SUBJECT = new Uint8Array(0)

export interface SessionKey {
  /** The UTC day (Unix days) the key belongs to: records keep it to derive the private half again. */
  day: number
  privateKey: Uint8Array
  publicKey: Uint8Array
}

export class WeakMasterSecretError extends Error {
  constructor() {
    super('the broker master secret must be at least 32 bytes')
    this.name = 'WeakMasterSecretError'
  }
}

/**
 * The broker's X25519 session keys, derived and never stored (contract §3.4.1, Decision):
 * private = HMAC-SHA256(master, "hem-notify-epk" ‖ kind byte ‖ subject ‖ day as u32 big-endian), so every
 * instance of the cloud holding the same master secret hands out and accepts the same keys, and nothing
 * in the buckets opens a MAC. A key is handed out on its day and accepted on that day and the next.
 */
export class SessionKeys {
  private readonly cache = new Map<string, SessionKey>()

  constructor(private readonly master: Uint8Array) {
    if (master.length < 32) throw new WeakMasterSecretError()
  }

  /** The key handed out at `now`: `{epk, exp}`, exp the end of the next UTC day. */
  issue(kind: SessionKind, subject: Uint8Array, now: number): { epk: Uint8Array; exp: number } {
    const day = Math.floor(now / DAY)
    return { epk: this.ofDay(kind, subject, day).publicKey, exp: (day + 2) * DAY }
  }

  /** The key of `kind` for `subject` whose public half is `epk`, when it is of today or yesterday. */
  find(kind: SessionKind, subject: Uint8Array, epk: Uint8Array, now: number): SessionKey | undefined {
    const today = Math.floor(now / DAY)
    for (const day of [today, today - 1]) {
      const key = this.ofDay(kind, subject, day)
      if (sameBytes(key.publicKey, epk)) return key
    }
    return undefined
  }

  /** The key of one day, derived again (a record names the day of the key it was made with). */
  ofDay(kind: SessionKind, subject: Uint8Array, day: number): SessionKey {
    const name = `${kind}.${Buffer.from(subject).toString('base64')}.${day}`
    let key = this.cache.get(name)
    if (!key) {
      const dayBytes = new Uint8Array(4)
      new DataView(dayBytes.buffer).setUint32(0, day)
      const message = new Uint8Array([...LABEL, KIND_BYTE[kind], ...subject, ...dayBytes])
      const privateKey = hmacSha256(this.master, message)
      key = { day, privateKey, publicKey: x25519PublicKey(privateKey) }
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear()
      this.cache.set(name, key)
    }
    return key
  }
}
