import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { call } from './http.js'
import { bearer, login, type Owned } from './owner.js'

/** Whether Debian's prometheus package (promtool, prometheus) is installed: deploy/setup.sh installs it. */
export const havePrometheus = await promisify(execFile)('promtool', ['--version']).then(
  () => true,
  () => false,
)

/** The device's `GET /metrics`, with a token of scope system:metrics logged in for it. */
export async function scrape(o: Owned, token?: string): Promise<string> {
  const answer = await call(`${o.base}/metrics`, { headers: bearer(token ?? (await login(o.base, 'system:metrics'))) })
  if (answer.status !== 200) throw new Error(`GET /metrics: ${answer.status} ${answer.text}`)
  return answer.text
}

/** The value of the first series of `name` whose labels include all of `labels` (undefined if none). */
export function valueOf(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match?.[1] !== name) continue
    const set = match[2] ?? ''
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) return Number(match[3])
  }
  return undefined
}

/** Every metric name an exposition has a series of (a histogram's `_bucket`, `_sum`, `_count` each). */
export function seriesNames(text: string): Set<string> {
  return new Set(text.split('\n').flatMap((line) => /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line)?.[1] ?? []))
}
