import type { MetricsSnapshot } from '../metrics/index.js'

/** How an exchange ended: its status, or `aborted` when the client went away first. */
export type Outcome = number | 'aborted'

/** What a meter is of: a route of the table (gateway/types.ts Route), by its path pattern and method. */
interface MeteredRoute {
  readonly path: string
  readonly method: string
}

/** From a cached read to a long command (a key's creation, an upload's chunk): 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** The methods named as they are; any other (a client's own word) counts as OTHER: the label's values stay few. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])
/** The route label of a request for the management app's files, and of one that matched no route. */
export const APP_ROUTE = '(app)'
export const NO_ROUTE = '(none)'

const REQUESTS = {
  name: 'hem_http_requests_total',
  help: 'HTTP requests answered, by route pattern, method and status (aborted: the client went away first)',
}
const DURATION = {
  name: 'hem_http_request_duration_seconds',
  help: 'Time from a request to its answer, by route pattern and method',
}

/** One value of prom-client's JSON of a metric (a histogram's name its series: `_bucket`, `_sum`, `_count`). */
type Values = { value: number; labels: Record<string, string | number>; metricName?: string }[]

/**
 * One route's (and method's) counts, as plain numbers: a request costs an increment and a bucket's, never
 * prom-client's per-call hashing of label values (about 1.6 µs a request, measured, a twentieth of a status
 * request's CPU); prom-client renders them at a scrape (RequestMetrics.snapshot).
 */
export class RouteMeter {
  private readonly outcomes = new Map<Outcome, number>()
  /** Observations per bucket (not cumulative); the last one is +Inf's. */
  private readonly buckets = new Float64Array(LATENCY_BUCKETS.length + 1)
  private sum = 0
  private count = 0

  constructor(
    private readonly route: string,
    private readonly method: string,
  ) {}

  settled(outcome: Outcome, seconds: number): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1)
    let bucket = 0
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++
    this.buckets[bucket]! += 1
    this.sum += seconds
    this.count += 1
  }

  requestValues(into: Values): void {
    const { route, method } = this
    for (const [status, value] of this.outcomes) into.push({ value, labels: { route, method, status } })
  }

  durationValues(into: Values): void {
    const { route, method } = this
    let cumulative = 0
    LATENCY_BUCKETS.forEach((le, i) => {
      cumulative += this.buckets[i]!
      into.push({ metricName: `${DURATION.name}_bucket`, value: cumulative, labels: { le, route, method } })
    })
    into.push({ metricName: `${DURATION.name}_bucket`, value: this.count, labels: { le: '+Inf', route, method } })
    into.push({ metricName: `${DURATION.name}_sum`, value: this.sum, labels: { route, method } })
    into.push({ metricName: `${DURATION.name}_count`, value: this.count, labels: { route, method } })
  }
}

/**
 * `hem_http_requests_total` and `hem_http_request_duration_seconds`, by the route table's path pattern (never the
 * path asked: it holds KIDs), its method and the status answered.
 */
export class RequestMetrics {
  private readonly routes = new Map<MeteredRoute, RouteMeter>()
  private readonly others = new Map<string, RouteMeter>()

  /** The meter of a request: its route's, or (none matched) the app's files' or no route's, by method. */
  meter(route: MeteredRoute | undefined, method: string, app: boolean): RouteMeter {
    if (route) {
      let meter = this.routes.get(route)
      if (!meter) this.routes.set(route, (meter = new RouteMeter(route.path, route.method)))
      return meter
    }
    const known = METHODS.has(method) ? method : 'OTHER'
    const key = app ? `${APP_ROUTE} ${known}` : known
    let meter = this.others.get(key)
    if (!meter) this.others.set(key, (meter = new RouteMeter(app ? APP_ROUTE : NO_ROUTE, known)))
    return meter
  }

  /** The counts so far, as prom-client's JSON of a counter and a histogram (it renders them with the rest). */
  snapshot(): MetricsSnapshot {
    const meters = [...this.routes.values(), ...this.others.values()]
    const requests: Values = []
    const durations: Values = []
    for (const meter of meters) {
      meter.requestValues(requests)
      meter.durationValues(durations)
    }
    return [
      { ...REQUESTS, type: 'counter', aggregator: 'sum', values: requests },
      { ...DURATION, type: 'histogram', aggregator: 'sum', values: durations },
    ] as unknown as MetricsSnapshot
  }
}
