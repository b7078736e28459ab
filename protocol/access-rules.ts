import { keyOperationScopes, type KeyOperation } from './key-scopes.js'
import { ALL_ROLES, USER_ROLES, type AccessRule } from './scopes.js'

/**
 * Who may call an operation that acts for a principal, as both the gateway (admission) and the
 * service behind it (its own check of the bearer token) read it.
 * `token`: a valid bearer token is needed. `token-unless-fresh`: once the device is personalised.
 * `optional`: the operation itself decides whether it may go without one (an anonymous key search).
 */
export interface OperationAccess extends AccessRule {
  auth: 'token' | 'token-unless-fresh' | 'optional'
}

const SYSTEM = ['system:config', 'system:upgrade'] as const

export const operationAccess = {
  configRead: { auth: 'token', scopes: ['system:config', 'auth:ext:pair', 'logger:get'], roles: ALL_ROLES },
  configWrite: { auth: 'token', scopes: ['system:config'], roles: ['U', 'M'] },
  attestation: { auth: 'token-unless-fresh' },
  // crypto-contract §5: any valid token, whatever its scope (never 403).
  selftest: { auth: 'token-unless-fresh' },
  reboot: { auth: 'token', scopes: SYSTEM, roles: ALL_ROLES },
  shutdown: { auth: 'token', scopes: ['system:config', 'system:shutdown'], roles: ALL_ROLES },
  upgrade: { auth: 'token-unless-fresh', scopes: ['system:upgrade', 'system:config'], roles: ALL_ROLES },
  logger: { auth: 'token', scopes: ['logger:get'], roles: ALL_ROLES },
  // The scope names the disk (and `:rw` the mode); the storage service reads which from it.
  storage: { auth: 'token', scopes: ['storage'], roles: USER_ROLES },
  // The pairing routes of external authenticators (ext-auth contract §1.0): the user alone, never M or ExtAuth.
  extPair: { auth: 'token', scopes: ['auth:ext:pair', 'system:config'], roles: ['U'] },
  // The backup passphrase and backups (docs/backup.md): the master alone, and the scope opens nothing else.
  backup: { auth: 'token', scopes: ['system:backup'], roles: ['M'] },
  // Any principal: journaling a refusal the gateway made, under the name the token proves.
  anyPrincipal: { auth: 'token' },
} as const satisfies Record<string, OperationAccess>

/** A key operation: the user and external authenticators with one of its scopes; a search may be anonymous. */
export function keyOperationAccess(op: KeyOperation): OperationAccess {
  return { auth: op === 'search' ? 'optional' : 'token', roles: USER_ROLES, scopes: keyOperationScopes[op] }
}
