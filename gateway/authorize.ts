import type { Principal } from '../actors/bus/types.js'
import type { Role, Route } from './types.js'

const PLACEHOLDER = /<(\w+)>$/

/**
 * Whether a token scope satisfies one required scope. Plain scopes match by prefix on `:`
 * boundaries (`storage:disk0:rw` satisfies `storage:disk0`, `storage:disk01` does not).
 * A scope ending in `<name>` needs exactly that scope with `name` filled from `values`; the
 * value part compares case-insensitively because key ids are accepted in any case.
 */
export function scopeSatisfies(tokenScope: string, required: string, values: Readonly<Record<string, unknown>>): boolean {
  const placeholder = PLACEHOLDER.exec(required)
  if (!placeholder) return tokenScope === required || tokenScope.startsWith(`${required}:`)
  const value = values[placeholder[1] as string]
  if (typeof value !== 'string' || value === '') return false
  const prefix = required.slice(0, placeholder.index)
  return tokenScope.startsWith(prefix) && tokenScope.slice(prefix.length).toLowerCase() === value.toLowerCase()
}

export function roleOf(principal: Principal): Role {
  return principal.sub === 'U' || principal.sub === 'M' ? principal.sub : 'ExtAuth'
}

/** Whether the principal's scope and role pass the route's lists; `values` fill scope placeholders. */
export function authorized(route: Route, principal: Principal, values: Readonly<Record<string, unknown>>): boolean {
  if (route.roles && !route.roles.includes(roleOf(principal))) return false
  return !route.scopes || route.scopes.some((scope) => scopeSatisfies(principal.scope, scope, values))
}
