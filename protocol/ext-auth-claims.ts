// The payloads of the external authenticator's eJWTs (contract §2.4); key order is free, integers are JSON numbers.

/** `request` (device → app, ext/init), signed with S_db. */
export interface PairingRequestClaims {
  jti: string
  exp: number
  /** The broker's epk. */
  aud: string
  /** The device's eid. */
  iss: string
  eat?: number
}

/** `reply` (app → device through the broker), signed with S_pair. */
export interface PairingReplyClaims {
  jti: string
  eat?: number
  /** The app's aid. */
  iss: string
  /** The device's eid. */
  aud: string
  /** The request's `aud`. */
  epk: string
  label?: string
}

/** `authreq` (device → apps, ext/request), signed with S_db: `scope` holds one sealed entry per pid. */
export interface AuthreqClaims {
  iss: string
  aud: string
  iat: number
  exp: number
  jti: string
  ctx?: string
  note?: string
  scope: Record<string, string>
}

/** `authreply` (app → device, ext/token), signed with S_pair: `scope` is sealed. */
export interface AuthreplyClaims {
  aud: string
  jti: string
  exp: number
  iat: number
  pid: string
  iss: string
  scope: string
  ctx?: string
}
