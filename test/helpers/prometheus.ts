// Debian's real prometheus, scraping targets on loopback: for the scrape test and the dashboard's screenshot tool.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { freePort } from './device.js'
import { call } from './http.js'

/** One series of an instant query's answer. */
export interface InstantSeries {
  metric: Record<string, string>
  value: [number, string]
}

/** One series of a range query's answer: [unix seconds, value as Prometheus writes it ("NaN" included)]. */
export interface RangeSeries {
  metric: Record<string, string>
  values: [number, string][]
}

export interface Prometheus {
  /** Its HTTP API's base, `http://127.0.0.1:PORT`. */
  url: string
  /** What it wrote on stderr so far (warnings and errors: it runs at --log.level=warn). */
  log(): string
  /** Whether it has exited (it should not before its teardown). */
  exited(): boolean
  /** `/api/v1/query` at now. */
  query(expr: string): Promise<InstantSeries[]>
  /** `/api/v1/query_range` from `start` to `end` (unix seconds) every `step` seconds. */
  queryRange(expr: string, range: { start: number; end: number; step: number }): Promise<RangeSeries[]>
}

export class PrometheusQueryError extends Error {}

/**
 * A prometheus with its config and data in `dir`, scraping `targets` (host:port, job `hemd`) every
 * `scrapeSeconds`; stopped (SIGTERM, and its exit awaited) in the teardowns of `t`.
 */
export async function startPrometheus(
  t: { teardown(fn: () => unknown): void },
  dir: string,
  targets: string[],
  scrapeSeconds = 1,
): Promise<Prometheus> {
  const config = join(dir, 'prometheus.yml')
  const list = targets.map((target) => `'${target}'`).join(', ')
  const lines = ['scrape_configs:', '  - job_name: hemd', `    scrape_interval: ${scrapeSeconds}s`]
  await writeFile(config, [...lines, `    static_configs: [{ targets: [${list}] }]`, ''].join('\n'))
  const port = await freePort()
  const prometheus = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let log = ''
  prometheus.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()))
  const exit = once(prometheus, 'exit')
  const exited = () => prometheus.exitCode !== null || prometheus.signalCode !== null
  t.teardown(async () => {
    if (!exited()) prometheus.kill('SIGTERM')
    await exit
  })
  const url = `http://127.0.0.1:${port}`
  const ask = async (path: string, params: Record<string, string>) => {
    const answer = await call(`${url}${path}?${new URLSearchParams(params).toString()}`)
    if (answer.status !== 200)
      throw new PrometheusQueryError(`${path} ${params.query}: ${answer.status} ${answer.text}`)
    return answer.json.data.result as unknown
  }
  return {
    url,
    log: () => log,
    exited,
    query: async (query) => (await ask('/api/v1/query', { query })) as InstantSeries[],
    queryRange: async (query, { start, end, step }) =>
      (await ask('/api/v1/query_range', {
        query,
        start: String(start),
        end: String(end),
        step: String(step),
      })) as RangeSeries[],
  }
}
