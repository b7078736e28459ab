import type { Principal } from '../../protocol/index.js'

/** The journal's subject field for a principal: `U`, `M`, or the external authenticator's id (no separators). */
export function journalSubject(principal: Principal | undefined): { subject?: string } {
  return principal ? { subject: principal.sub.replace(/[|\r\n]/g, '_').slice(0, 64) } : {}
}
