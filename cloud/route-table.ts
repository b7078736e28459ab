import type { CloudRequest, CloudRoute } from './types.js'

export type RouteMatch =
  | { kind: 'found'; route: CloudRoute; params: Record<string, string> }
  | { kind: 'wrong_method'; allowed: CloudRequest['method'][] }
  | { kind: 'none' }

/** The routes by pattern: a path matches a pattern of as many segments, literal ones equal, `:name` ones not empty. */
export class RouteTable {
  constructor(private readonly routes: readonly CloudRoute[]) {}

  match(method: string, path: string): RouteMatch {
    const segments = path.split('/')
    const allowed: CloudRequest['method'][] = []
    for (const route of this.routes) {
      const params = matchPattern(route.pattern, segments)
      if (!params) continue
      if (route.method === method) return { kind: 'found', route, params }
      allowed.push(route.method)
    }
    return allowed.length > 0 ? { kind: 'wrong_method', allowed } : { kind: 'none' }
  }
}

function matchPattern(pattern: string, segments: string[]): Record<string, string> | undefined {
  const parts = pattern.split('/')
  if (parts.length !== segments.length) return undefined
  const params: Record<string, string> = {}
  for (const [i, part] of parts.entries()) {
    const segment = segments[i]!
    if (!part.startsWith(':')) {
      if (part !== segment) return undefined
      continue
    }
    if (segment === '') return undefined
    try {
      params[part.slice(1)] = decodeURIComponent(segment)
    } catch {
      return undefined
    }
  }
  return params
}
