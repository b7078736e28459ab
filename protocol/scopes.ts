import type { Principal } from './bus-messages.js'

const PLACEHOLDER = /<(\w+)>$/

/** The shape each scope placeholder's value must have before it can be compared. */
const PLACEHOLDER_VALUES: Readonly<Record<string, RegExp>> = { kid: /^[0-9a-fA-F]{32}$/ }

/**
 * Whether a token scope satisfies one required scope. Plain scopes match by prefix on `:`
 * boundaries (`storage:disk0:rw` satisfies `storage:disk0`, `storage:disk01` does not).
 * A scope ending in `<name>` needs exactly that scope with `name` filled from `values`; the
 * value part compares case-insensitively because key ids are accepted in any case.
 */
export function scopeSatisfies(
  tokenScope: string,
  required: string,
  values: Readonly<Record<string, unknown>>,
): boolean {
  const placeholder = PLACEHOLDER.exec(required)
  if (!placeholder) return tokenScope === required || tokenScope.startsWith(`${required}:`)
  const value = values[placeholder[1] as string]
  if (typeof value !== 'string' || value === '') return false
  const prefix = required.slice(0, placeholder.index)
  return tokenScope.startsWith(prefix) && tokenScope.slice(prefix.length).toLowerCase() === value.toLowerCase()
}

/** Routes and operations that any principal may call, given the scope. */
export const ALL_ROLES: readonly Role[] = ['U', 'M', 'ExtAuth']

/** Storage, key management and ciphers: the user and external authenticators, never the master (contract §2.4). */
export const USER_ROLES: readonly Role[] = ['U', 'ExtAuth']

export function roleOf(principal: Principal): Role {
  return principal.sub === 'U' || principal.sub === 'M' ? principal.sub : 'ExtAuth'
}

/**
 * Whether the principal's scope and role pass the route's lists; `values` fill scope placeholders.
 * With `deferMalformed`, a placeholder whose value is missing or malformed passes the scope check
 * for a token scope of that kind (`keymgmt:use:…` for `keymgmt:use:<kid>`): the actor behind the
 * route, where the value is known, checks it exactly (a malformed one is its journaled 400).
 */
export function authorized(
  route: AccessRule,
  principal: Principal,
  values: Readonly<Record<string, unknown>>,
  deferMalformed = false,
): boolean {
  if (route.roles && !route.roles.includes(roleOf(principal))) return false
  if (!route.scopes) return true
  return route.scopes.some(
    (scope) =>
      scopeSatisfies(principal.scope, scope, values) ||
      (deferMalformed && placeholderMalformed(scope, values) && principal.scope.startsWith(scopeKind(scope))),
  )
}

/** What a scope is before its placeholder: `keymgmt:use:` of `keymgmt:use:<kid>`. */
function scopeKind(required: string): string {
  return required.slice(0, PLACEHOLDER.exec(required)?.index)
}

function placeholderMalformed(required: string, values: Readonly<Record<string, unknown>>): boolean {
  const name = PLACEHOLDER.exec(required)?.[1]
  if (name === undefined) return false
  const value = values[name]
  return typeof value !== 'string' || !(PLACEHOLDER_VALUES[name]?.test(value) ?? value !== '')
}

/** `U` user, `M` master; any other token subject is an external authenticator. */
export type Role = 'U' | 'M' | 'ExtAuth'

/** Who may call a route or operation: roles and scopes (any one of them); absent means unrestricted. */
export interface AccessRule {
  roles?: readonly Role[]
  scopes?: readonly string[]
}
