import { operationAccess } from './access-rules.js'
import { keyOperationScopes } from './key-scopes.js'
import { PLACEHOLDER, PLACEHOLDER_VALUES } from './scopes.js'

/**
 * `storage:disk<N>[:rw]`: the disk and the mode a storage scope names (seed §3). Any disk number
 * passes here; one the device lacks is the storage service's 406 (contract §3).
 */
export const STORAGE_SCOPE = /^storage:disk(0|[1-9]\d{0,2})(:rw)?$/

// The access tables' `storage` is the kind every storage scope starts with, not a scope a token may carry.
const required = [
  ...Object.values(operationAccess).flatMap((rule): readonly string[] => ('scopes' in rule ? rule.scopes : [])),
  ...Object.values(keyOperationScopes).flat(),
].filter((scope) => scope !== 'storage')
const plain = new Set(required.filter((scope) => !PLACEHOLDER.test(scope)))
const templated = required.flatMap((scope) => {
  const placeholder = PLACEHOLDER.exec(scope)
  const shape = placeholder && PLACEHOLDER_VALUES[placeholder[1] as string]
  return shape ? [{ prefix: scope.slice(0, placeholder.index), shape }] : []
})

/**
 * Whether a login may ask for `scope`: exactly one of the contract's scopes (seed §5, contract
 * §2.4: the access tables of protocol/), a `keymgmt:use:<kid>` with a 32-hex-digit KID, or a
 * storage scope. A token for anything else would open nothing, and its string would only reach
 * the journal.
 */
export function namesContractScope(scope: string): boolean {
  if (plain.has(scope) || STORAGE_SCOPE.test(scope)) return true
  return templated.some(({ prefix, shape }) => scope.startsWith(prefix) && shape.test(scope.slice(prefix.length)))
}
