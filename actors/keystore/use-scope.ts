import type { Principal } from '../../protocol/index.js'

const USE = 'keymgmt:use:'

/**
 * Whether the principal may use the key `kid` (normalised): only with exactly `keymgmt:use:<kid>`,
 * the KID in lower case as the device emits it (crypto-contract §3); no KID, no use.
 */
export function holdsUseScope(principal: Principal | undefined, kid: string | undefined): boolean {
  return kid !== undefined && principal?.scope === `${USE}${kid}`
}

/** Whether the principal's scope is a use scope of some key, which only `holdsUseScope` can grant. */
export function isUseScope(principal: Principal): boolean {
  return principal.scope.startsWith(USE)
}
