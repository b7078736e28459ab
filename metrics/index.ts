// The public face of metrics/: this process's instruments (prom-client) and the snapshots that carry them.
export { followLoginQueue, processMetrics, type ProcessMetrics } from './process-metrics.js'
export { exposition, type Exposition, type MetricsSnapshot, snapshotOf } from './metrics-snapshot.js'
