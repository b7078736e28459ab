import { Registry } from 'prom-client'
import { exposition, type Exposition, type MetricsSnapshot, processMetrics, snapshotOf } from '../metrics/index.js'
import type { GatewayBus } from '../bus/index.js'
import type { Clock } from '../hal/index.js'
import { registerDeviceGauges } from './device-gauges.js'
import { RequestMetrics } from './request-metrics.js'

/** The snapshots of the other service processes of a `--split` device (bus/metrics-feed.ts). */
export interface MetricsFeed {
  current(): MetricsSnapshot[]
}

/**
 * What `GET /metrics` shows (docs/metrics.md): the gateway's own series (requests, and the device's state from the
 * read models), this process's instruments, and the latest snapshot of every other service process.
 */
export class DeviceMetrics {
  private readonly registry = new Registry()
  /** Undefined in a process without instruments (the bench's baseline): requests are then not metered. */
  readonly requests: RequestMetrics | undefined

  constructor(
    bus: GatewayBus,
    clock: Clock,
    /** The `process` label of this process's instruments: `hemd`, or the gateway's service process. */
    private readonly process: string,
    private readonly feed?: MetricsFeed,
  ) {
    registerDeviceGauges(this.registry, bus, clock)
    this.requests = processMetrics() && new RequestMetrics()
  }

  async exposition(): Promise<Exposition> {
    const own = processMetrics()
    const snapshots = [await snapshotOf(this.registry), ...(this.feed?.current() ?? [])]
    if (this.requests) snapshots.push(this.requests.snapshot())
    if (own) snapshots.push(await snapshotOf(own.registry, this.process))
    return exposition(snapshots)
  }
}
