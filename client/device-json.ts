// What the calls of the external authenticator need of a device exchange: JSON requests, with or without the
// token of a scope. hemctl's DeviceSession is one; the management app gives its own, so both run the same calls.

/** A request's JSON body, when it has one. */
export interface JsonInput {
  json?: unknown
}

export interface DeviceJson {
  /** A request without a token; a refusal throws the client's error class of its status. */
  json<R>(method: string, path: string, input?: JsonInput): Promise<R>
  /** A request under a token of `scope`. */
  authorizedJson<R>(scope: string, method: string, path: string, input?: JsonInput): Promise<R>
}
