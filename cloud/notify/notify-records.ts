/** How long a closed registration or event stays readable (contract §3.4.6, §3.7). */
export const TERMINAL_KEEP = 600
/** The longest a registration waits for the phone (contract §3.4.2). */
export const REGISTRATION_LIFETIME = 600

/** A pairing under way (contract §3.4.2–§3.4.4, §3.5.1); binary values in standard base64. */
export interface Registration {
  rid: string
  eid: string
  epk: string
  /** The UTC day of the eid-bound key `epk`: its private half is derived again from it, never stored. */
  epkDay: number
  request: string
  jti: string
  exp: number
  /** The `register/init` caller's address (`ipinfo_eid`). */
  ip: string
  state: 'open' | 'replied' | 'refused' | 'paired'
  /** The phone's answer, kept only until the pairing is finalised. */
  answer?: { pid: string; aid: string; fid: string; label: string; reply?: string }
  /** The device's `code`, kept after finalising so that a repeat of the same body gets the same 200. */
  code?: string
  closedAt?: number
}

/** An approval request (contract §3.4.5, §3.4.6, §3.5.2). */
export interface NotifyEvent {
  eventid: string
  eid: string
  epk: string
  epkDay: number
  jti: string
  exp: number
  ip: string
  /** The sealed scope of each target, by pidx: the broker hands each pid only its own and can open none. */
  entries: Record<string, string>
  state: 'pending' | 'allowed' | 'denied' | 'withdrawn'
  pid?: string
  authreply?: string
  closedAt?: number
}

/** An active pairing, routed events of its eid (contract §3.4.4). */
export interface Subscriber {
  pid: string
  eid: string
  aid: string
  kid: string
  fid: string
  label: string
  created: number
}

/** Whether a closed record is still readable, or a pending one past its `exp` still reports "expired". */
export function stillKept(record: { exp: number; closedAt?: number }, now: number): boolean {
  return now < (record.closedAt ?? record.exp) + TERMINAL_KEEP
}
