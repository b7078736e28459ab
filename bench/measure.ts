import autocannon from 'autocannon'
import type { HttpLoad, LoadSettings, Sample, Scenario, SerialLoad } from './types.js'

/** A serial exchange answered, but not 2xx. */
export class Non2xxError extends Error {
  override readonly name = 'Non2xxError'
}

/** Runs one scenario's load for the settings' duration (cut short when `signal` aborts). */
export function measure(scenario: Scenario, load: LoadSettings, signal: AbortSignal): Promise<Sample> {
  return scenario.load.kind === 'http'
    ? measureHttp(scenario.load, load, signal)
    : measureSerial(scenario.load, load, signal)
}

/**
 * autocannon's load. Latencies are taken from each 2xx response rather than from autocannon's
 * histogram, which keeps whole milliseconds only.
 */
function measureHttp(scenario: HttpLoad, load: LoadSettings, signal: AbortSignal): Promise<Sample> {
  const latencies: number[] = []
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: scenario.url,
        method: scenario.method,
        headers: scenario.headers,
        ...(scenario.body === undefined ? {} : { body: scenario.body }),
        connections: scenario.connections ?? load.connections,
        duration: load.duration,
        servername: 'localhost',
      },
      (error, result) => {
        signal.removeEventListener('abort', stop)
        if (error) return reject(error)
        if (scenario.status === undefined)
          return resolve(sample(latencies, result['2xx'], result.duration, result.errors, result.non2xx))
        // autocannon counts a 304 as non-2xx: here it is the answer asked for, and anything else is not.
        const unexpected = result['2xx'] + result.non2xx - latencies.length
        resolve(sample(latencies, latencies.length, result.duration, result.errors, unexpected))
      },
    )
    const stop = () => instance.stop()
    signal.addEventListener('abort', stop, { once: true })
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (answered(statusCode, scenario.status)) latencies.push(responseTime)
    })
  })
}

/** An answer the load asks for: its `status`, else any 2xx. */
export function answered(statusCode: number, status: number | undefined): boolean {
  return status === undefined ? statusCode >= 200 && statusCode < 300 : statusCode === status
}

/** One exchange after the other until the duration is over; the last one is let finish. */
async function measureSerial(scenario: SerialLoad, load: LoadSettings, signal: AbortSignal): Promise<Sample> {
  const latencies: number[] = []
  let errors = 0
  let non2xx = 0
  const start = performance.now()
  const end = start + load.duration * 1000
  while (performance.now() < end && !signal.aborted) {
    const sent = performance.now()
    try {
      await scenario.run()
      latencies.push(performance.now() - sent)
    } catch (error) {
      if (error instanceof Non2xxError) non2xx++
      else errors++
    }
  }
  return sample(latencies, latencies.length, (performance.now() - start) / 1000, errors, non2xx)
}

function sample(latencies: number[], ok: number, seconds: number, errors: number, non2xx: number): Sample {
  latencies.sort((x, y) => x - y)
  return {
    requestsPerSecond: ok / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    ok,
    errors,
    non2xx,
  }
}

/** Nearest-rank percentile of sorted values; NaN when there are none. */
function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
}
