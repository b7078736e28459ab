import type { Variant } from '../protocol/index.js'
import type { Route } from './types.js'

export interface RouteMatch {
  route: Route
  params: Record<string, string>
}

interface CompiledRoute {
  route: Route
  /** Literal segment text, or undefined where the pattern has a parameter. */
  literals: (string | undefined)[]
  names: (string | undefined)[]
}

/**
 * The family's certification scripts send `wipe_config` with spaces after the path (crypto-contract
 * §6); a client's URL encoding makes them `%20`. Any route's path ends before them. (Raw spaces never
 * get here: uWS takes a request line with more than one space before `HTTP/1.1` for an unfinished
 * request and closes the connection unanswered at its idle timeout; the DIAG build's front makes them
 * one before uWS reads the line, see request-lines.ts.)
 */
const SPACE = '%20'

function withoutTrailingSpaces(path: string): string {
  // No regular expression: a path almost never ends in `%20`, and endsWith finds that without a scan.
  let end = path.length
  while (path.endsWith(SPACE, end)) end -= SPACE.length
  return end === path.length ? path : path.slice(0, end)
}

/** The parameters of a literal route's every match: shared, so frozen. */
const NO_PARAMS: Record<string, string> = Object.freeze({})

/**
 * Finds the route for a request. Only this device's variant is served, so a route of the other
 * variant, a wrong method and an unknown path are all the same miss (the contract's 404).
 * Where patterns overlap (`/api/logger/list` and `/api/logger/:id`) the literal segment wins.
 */
export class Router {
  private readonly routes: CompiledRoute[]
  /** The routes without parameters by method and path: most requests are found here at once. */
  private readonly literal = new Map<string, Map<string, RouteMatch>>()

  constructor(routes: readonly Route[], variant: Variant) {
    this.routes = routes
      .filter((route) => route.variants.includes(variant))
      .map(compile)
      .sort(bySpecificity)
    // A literal route is the most specific for its path: first in `routes` for it too, so the first kept.
    for (const c of this.routes) {
      if (c.names.some((name) => name !== undefined)) continue
      const byPath = this.literal.get(c.route.method) ?? new Map<string, RouteMatch>()
      this.literal.set(c.route.method, byPath)
      if (!byPath.has(c.route.path)) byPath.set(c.route.path, { route: c.route, params: NO_PARAMS })
    }
  }

  /** `path` as uWS gives it: not decoded, the query string apart. */
  match(method: string, path: string): RouteMatch | undefined {
    const literal = this.literal.get(method)?.get(path)
    if (literal) return literal
    const segments = withoutTrailingSpaces(path).split('/')
    for (const c of this.routes) {
      if (c.route.method !== method || c.literals.length !== segments.length) continue
      const params = matchSegments(c, segments)
      if (params) return { route: c.route, params }
    }
    return undefined
  }
}

function compile(route: Route): CompiledRoute {
  const segments = route.path.split('/')
  return {
    route,
    literals: segments.map((s) => (s.startsWith(':') ? undefined : s)),
    names: segments.map((s) => (s.startsWith(':') ? s.slice(1) : undefined)),
  }
}

function bySpecificity(a: CompiledRoute, b: CompiledRoute): number {
  const n = Math.min(a.literals.length, b.literals.length)
  for (let i = 0; i < n; i++) {
    const aParam = a.literals[i] === undefined
    const bParam = b.literals[i] === undefined
    if (aParam !== bParam) return aParam ? 1 : -1
  }
  return 0
}

function matchSegments(c: CompiledRoute, segments: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {}
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string
    const name = c.names[i]
    if (name === undefined) {
      if (segment !== c.literals[i]) return undefined
      continue
    }
    if (segment === '') return undefined
    try {
      params[name] = decodeURIComponent(segment)
    } catch {
      return undefined
    }
  }
  return params
}
