import type { BenchSummary } from './run-bench.js'
import type { TargetCheck } from './check-targets.js'

/** The human report: one line per scenario (medians of the rounds), then each target with PASS or MISS. */
export function renderReport(summary: BenchSummary): string {
  const { settings, machine } = summary
  const rows = summary.scenarios.map(({ id, title, median: m }) =>
    [
      id.padEnd(7),
      m.requestsPerSecond.toFixed(0).padStart(8),
      m.p50.toFixed(3).padStart(8),
      m.p99.toFixed(3).padStart(8),
      String(m.ok).padStart(9),
      String(m.errors).padStart(7),
      String(m.non2xx).padStart(8),
      `  ${title}`,
    ].join(''),
  )
  return [
    `hemd bench: ${settings.connections} connections, ${settings.duration} s per load, ${settings.rounds} round(s) interleaved, median of rounds`,
    `machine: ${machine.cpus} cpus (${machine.cpuModel}), node ${machine.node}, ${machine.platform}`,
    '',
    `${'id'.padEnd(7)}${'req/s'.padStart(8)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'2xx'.padStart(9)}${'errors'.padStart(7)}${'non-2xx'.padStart(8)}  scenario`,
    ...rows,
    '',
    'targets (against the baselines of this run)',
    ...summary.targets.map(renderTarget),
    '',
  ].join('\n')
}

function renderTarget(t: TargetCheck): string {
  const unit = t.unit ? ` ${t.unit}` : ''
  const measured = `${t.measured.toFixed(t.unit ? 1 : 3)}${unit}`
  return `  ${t.label.padEnd(36)}${measured.padStart(10)}  ${t.relation} ${t.limit}${unit}`.padEnd(64) + (t.pass ? 'PASS' : 'MISS')
}
