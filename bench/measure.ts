import autocannon from 'autocannon'
import type { LoadSettings, Sample, Scenario } from './types.js'

/**
 * Runs one scenario's load with autocannon (cut short when `signal` aborts). Latencies are taken
 * from each 2xx response rather than from autocannon's histogram, which keeps whole milliseconds only.
 */
export function measure(scenario: Scenario, load: LoadSettings, signal: AbortSignal): Promise<Sample> {
  const latencies: number[] = []
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: scenario.url,
        method: scenario.method,
        headers: scenario.headers,
        ...(scenario.body === undefined ? {} : { body: scenario.body }),
        connections: load.connections,
        duration: load.duration,
        servername: 'localhost',
      },
      (error, result) => {
        signal.removeEventListener('abort', stop)
        if (error) return reject(error)
        latencies.sort((x, y) => x - y)
        resolve({
          requestsPerSecond: result['2xx'] / result.duration,
          p50: percentile(latencies, 0.5),
          p99: percentile(latencies, 0.99),
          ok: result['2xx'],
          errors: result.errors,
          non2xx: result.non2xx,
        })
      },
    )
    const stop = () => instance.stop()
    signal.addEventListener('abort', stop, { once: true })
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime)
    })
  })
}

/** Nearest-rank percentile of sorted values; NaN when there are none. */
function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
}
