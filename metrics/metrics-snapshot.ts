import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client'

/** A registry's metrics as data (prom-client's getMetricsAsJSON): what a `--split` service publishes. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[]

export interface Exposition {
  body: string
  contentType: string
}

/** The metrics of `registry`, with the label `process` (which process they are of) on every value when given. */
export async function snapshotOf(registry: Registry, process?: string): Promise<MetricsSnapshot> {
  return (await registry.getMetricsAsJSON()).map((metric) => ({
    ...metric,
    // Each process's values keep their own series (told apart by `process`): summed, none is lost.
    aggregator: 'sum',
    values:
      process === undefined
        ? metric.values
        : metric.values.map((value) => ({ ...value, labels: { ...value.labels, process } })),
  }))
}

/** The text exposition of several processes' snapshots together (prom-client's own merge and rendering). */
export async function exposition(snapshots: readonly MetricsSnapshot[]): Promise<Exposition> {
  const registry = AggregatorRegistry.aggregate([...snapshots])
  return { body: await registry.metrics(), contentType: registry.contentType }
}
