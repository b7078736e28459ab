// What travels on the bus. Payloads are msgpackr-encoded (useRecords: false).

import type { FaultEventType } from './fail-state.js'

export interface Principal {
  /** `U` (user), `M` (master) or an external authenticator's id. */
  sub: string
  scope: string
}

/** A command from the gateway (or a tool) to one actor: `hem.<devid>.cmd.<service>.<op>`. */
export interface CommandRequest<B = unknown> {
  /** Request id, also written to the journal so HTTP traffic and audit records correlate. */
  rid: string
  /**
   * Inside a service only: the principal it found in `bearer` after verifying it. One that arrives
   * on the bus is dropped unread (bus/service-host.ts), so no sender can claim to act for anyone.
   */
  principal?: Principal
  /** The caller's bearer token: every service that acts for a principal verifies it itself. */
  bearer?: string
  /** True when the request arrived over TLS. */
  tls: boolean
  /** Path parameters of the route, e.g. `{ id: '65a1b2c3' }`. */
  params?: Record<string, string>
  body?: B
  /**
   * When the caller stops waiting for the reply, in ms since the Unix epoch (`Date.now()`). An
   * absolute time rather than a budget: every process of the device reads the same host clock,
   * and the time a command spends in transit or queued in the service counts against it without
   * anyone measuring it. A service does not start a command whose deadline has passed.
   */
  deadline?: number
  /**
   * The client's address as the gateway saw it (`127.0.0.1`, `2001:db8::1`). A claim of the
   * gateway, used only to share out what strangers may queue (login attempts, challenges) fairly
   * between clients: never for authorisation, never to let anything in.
   */
  source?: string
}

export interface ErrorBody {
  error: string
  message: string
}

export interface CommandReply<B = unknown> {
  status: number
  body?: B | ErrorBody
  /** `text/plain` etc.; JSON when absent. */
  contentType?: string
  /** Whole seconds a refused caller should wait before trying again: the gateway sends it as `Retry-After`. */
  retryAfter?: number
}

/** A state event an actor publishes on `hem.<devid>.evt.<service>.state`: its whole public read model. */
export interface StateEvent<S = unknown> {
  service: string
  /** Increases with every change from one actor incarnation; a lower rev from the same boot is stale. */
  rev: number
  /** Distinguishes actor incarnations, so a restarted actor's rev 1 is not mistaken for stale. */
  boot: string
  state: S
}

/** A fault a service found in itself (`hem.<devid>.evt.<service>.fault`), for the health machine. */
export interface FaultEvent {
  service: string
  /** One of machines/health.ts FAULT_EVENTS: STACK_OVERFLOW, ALLOCATION_FAILED, ... */
  fault: FaultEventType
  detail?: Record<string, unknown>
}
