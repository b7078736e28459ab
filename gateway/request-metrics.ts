import { Counter, Histogram, type Registry } from 'prom-client'

/** What a meter is of: a route of the table (gateway/types.ts Route), by its path pattern and method. */
interface MeteredRoute {
  readonly path: string
  readonly method: string
}

/** How an exchange ended: its status, or `aborted` when the client went away first. */
export type Outcome = number | 'aborted'

/** From a cached read to a long command (a key's creation, an upload's chunk): 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** The methods named as they are; any other (a client's own word) counts as OTHER: the label's values stay few. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])
/** The route label of a request for the management app's files, and of one that matched no route. */
export const APP_ROUTE = '(app)'
export const NO_ROUTE = '(none)'

/**
 * One route's (and method's) instruments, resolved once: a request then costs an observe and an increment, with no
 * lookup of label values (prom-client hashes them at every `labels()`).
 */
export class RouteMeter {
  private readonly byOutcome = new Map<Outcome, Counter.Internal>()
  private readonly latency: Histogram.Internal<'route' | 'method'>

  constructor(
    private readonly requests: Counter<'route' | 'method' | 'status'>,
    duration: Histogram<'route' | 'method'>,
    private readonly route: string,
    private readonly method: string,
  ) {
    this.latency = duration.labels(route, method)
  }

  settled(outcome: Outcome, seconds: number): void {
    this.latency.observe(seconds)
    let counter = this.byOutcome.get(outcome)
    if (!counter) this.byOutcome.set(outcome, (counter = this.requests.labels(this.route, this.method, `${outcome}`)))
    counter.inc()
  }
}

/**
 * `hem_http_requests_total` and `hem_http_request_duration_seconds`, by the route table's path pattern (never the
 * path asked: it holds KIDs), its method and the status answered.
 */
export class RequestMetrics {
  private readonly requests: Counter<'route' | 'method' | 'status'>
  private readonly duration: Histogram<'route' | 'method'>
  private readonly routes = new Map<MeteredRoute, RouteMeter>()
  private readonly others = new Map<string, RouteMeter>()

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'hem_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status (aborted: the client went away first)',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    })
    this.duration = new Histogram({
      name: 'hem_http_request_duration_seconds',
      help: 'Time from a request to its answer, by route pattern and method',
      labelNames: ['route', 'method'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    })
  }

  /** The meter of a request: its route's, or (none matched) the app's files' or no route's, by method. */
  meter(route: MeteredRoute | undefined, method: string, app: boolean): RouteMeter {
    if (route) {
      let meter = this.routes.get(route)
      if (!meter) this.routes.set(route, (meter = this.make(route.path, route.method)))
      return meter
    }
    const known = METHODS.has(method) ? method : 'OTHER'
    const key = app ? `${APP_ROUTE} ${known}` : known
    let meter = this.others.get(key)
    if (!meter) this.others.set(key, (meter = this.make(app ? APP_ROUTE : NO_ROUTE, known)))
    return meter
  }

  private make(route: string, method: string): RouteMeter {
    return new RouteMeter(this.requests, this.duration, route, method)
  }
}
