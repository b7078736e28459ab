import type { Logger } from 'pino'

/** HTTPS requests still answered once the DIAG fault is armed (crypto-contract §6: "after 5 more"). */
export const TLS_BREAK_GRACE = 5

/**
 * The DIAG build's TLS fault (`/api/diag/break_tls`). uWS offers no hook into the handshake and
 * no identity of a connection, so the fault is drawn at the next layer: once armed, the next
 * TLS_BREAK_GRACE HTTPS requests are answered, and every one after them has its connection closed
 * without an HTTP answer, which a client sees as a broken TLS session. It lives in the gateway's
 * memory, so a reboot (a new gateway) clears it; plain HTTP is never touched, so that a reboot can
 * still be asked for.
 */
export class TlsBreaker {
  /** HTTPS requests still to answer; undefined while not armed. */
  private remaining: number | undefined

  constructor(private readonly logger: Logger) {}

  /** Arms the fault; arming it again changes nothing (the count goes on). */
  arm(): void {
    if (this.remaining !== undefined) return
    this.remaining = TLS_BREAK_GRACE
    this.logger.warn({ after: TLS_BREAK_GRACE }, 'DIAG: TLS broken after the next HTTPS requests, until a reboot')
  }

  /** Called for each HTTPS request: whether its connection must be closed unanswered. */
  drops(): boolean {
    if (this.remaining === undefined) return false
    if (this.remaining === 0) return true
    this.remaining--
    if (this.remaining === 0) this.logger.warn('DIAG: every further HTTPS connection is closed unanswered')
    return false
  }
}
