import type { BootSample } from './boot-time.js'
import type { ApprovalSample, ApprovalsResult } from './cloud-approvals.js'
import type { BenchSummary, ScenarioResult } from './run-bench.js'
import type { TargetCheck } from './check-targets.js'

const MB = 1024 * 1024

/** A number right-aligned in its column, and never run into the one before when it is wider. */
const cell = (text: string, width: number) => ` ${text}`.padStart(width)

/**
 * The human report: one line per scenario (medians of the rounds), the scaling table, the boots,
 * the timed exchanges, then each target with PASS or MISS.
 */
export function renderReport(summary: BenchSummary): string {
  const { settings, machine, boot, freshBoot } = summary
  const rows = summary.scenarios.map(scenarioRow)
  const bootLine = (what: string, sample: BootSample) =>
    `boot to ready, ${what}: median ${sample.medianMs.toFixed(0)} ms, max ${sample.maxMs.toFixed(0)} ms ` +
    `(${sample.readyMs.map((ms) => ms.toFixed(0)).join(', ')})`
  const boots = [
    ...(boot ? [bootLine(`${settings.journalRecords} journal records`, boot)] : []),
    ...(freshBoot ? [bootLine('fresh device', freshBoot)] : []),
  ]
  const timings = summary.timings
    ? [
        '',
        `timed exchanges, ms (median and max of ${settings.rounds} round(s))`,
        `  ${'id'.padEnd(12)}${'median'.padStart(10)}${'max'.padStart(10)}  exchange`,
        ...summary.timings.map(
          (t) =>
            `  ${t.id.padEnd(12)}${milliseconds(t.medianMs).padStart(10)}` +
            `${milliseconds(t.maxMs).padStart(10)}  ${t.title}` +
            (t.detail ? ` (${t.detail})` : ''),
        ),
      ]
    : []
  const scaling = summary.scaling
    ? [
        'scaling: encrypt as c on hemd --bus, by connections (median of rounds; batch = commands per',
        "NATS message from the gateway, the 2xx answers over the gateway connection's in_msgs on the bus)",
        `  ${'connections'.padEnd(12)}${'req/s'.padStart(8)}${'p50 ms'.padStart(9)}` +
          `${'p99 ms'.padStart(9)}${'batch'.padStart(8)}`,
        ...summary.scaling.map(
          (r) =>
            `  ${String(r.connections).padEnd(12)}${cell(r.requestsPerSecond.toFixed(0), 8)}` +
            `${cell(r.p50.toFixed(3), 9)}${cell(r.p99.toFixed(3), 9)}` +
            `${cell(Number.isNaN(r.batch) ? '-' : r.batch.toFixed(2), 8)}`,
        ),
        '',
      ]
    : []
  const rss =
    summary.peakRssBytes === undefined
      ? []
      : [`hemd peak RSS over the run (either hemd's runtime's VmHWM): ${(summary.peakRssBytes / MB).toFixed(1)} MB`]
  return [
    `hemd bench: ${settings.connections} connections, ${settings.duration} s per load, ` +
      `${settings.rounds} round(s) interleaved, median of rounds`,
    `machine: ${machine.cpus} cpus (${machine.cpuModel}), node ${machine.node}, ${machine.platform}`,
    '',
    ...(rows.length === 0
      ? []
      : [
          `${'id'.padEnd(14)}${'req/s'.padStart(8)}${'MB/s'.padStart(8)}` +
            `${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}` +
            `${'2xx'.padStart(8)}${'errors'.padStart(7)}${'non-2xx'.padStart(8)}${'RSS MB'.padStart(7)}` +
            `${'CPU µs'.padStart(8)}  scenario`,
          ...rows,
          '',
        ]),
    ...scaling,
    ...(summary.approvals ? approvalLines(summary.approvals, settings.rounds) : []),
    ...boots,
    ...rss,
    ...timings,
    '',
    'targets (against the baselines of this run)',
    ...summary.targets.map(renderTarget),
    '',
  ].join('\n')
}

function approvalLines({ devices, cloud, baseline }: ApprovalsResult, rounds: number): string[] {
  const row = (side: string, s: ApprovalSample) =>
    `  ${side.padEnd(12)}${cell(s.approvalsPerSecond.toFixed(1), 12)}${cell(s.p50.toFixed(1), 9)}` +
    `${cell(s.p99.toFixed(1), 9)}${cell(String(s.approvals), 10)}${cell(String(s.failed), 8)}` +
    `${cell(s.requests.toFixed(1), 10)}`
  return [
    `approvals end to end: ${devices} simulated devices at once, each with its phone (median of ${rounds} round(s);`,
    'latency: request to a token-ready authreply; baseline: the same clients against recorded answers)',
    `  ${'server'.padEnd(12)}${'approvals/s'.padStart(12)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}` +
      `${'approvals'.padStart(10)}${'failed'.padStart(8)}${'requests'.padStart(10)}`,
    row('hem-cloud', cloud),
    row('baseline', baseline),
    `  hem-cloud / baseline: approvals/s ${(cloud.approvalsPerSecond / baseline.approvalsPerSecond).toFixed(3)}, ` +
      `p50 ${(cloud.p50 / baseline.p50).toFixed(1)}x, p99 ${(cloud.p99 / baseline.p99).toFixed(1)}x`,
    '',
  ]
}

/** One scenario's line: the medians of its rounds. */
function scenarioRow({ id, title, median: m, megabytesPerSecond, peakRssBytes }: ScenarioResult): string {
  return [
    id.padEnd(14),
    cell(m.requestsPerSecond.toFixed(m.requestsPerSecond < 100 ? 2 : 0), 8),
    cell(megabytesPerSecond === undefined ? '-' : megabytesPerSecond.toFixed(1), 8),
    cell(m.p50.toFixed(3), 9),
    cell(m.p99.toFixed(3), 9),
    cell(String(m.ok), 8),
    cell(String(m.errors), 7),
    cell(String(m.non2xx), 8),
    cell(peakRssBytes === undefined ? '-' : (peakRssBytes / MB).toFixed(0), 7),
    cell(m.cpuMicrosPerAnswer === undefined ? '-' : m.cpuMicrosPerAnswer.toFixed(0), 8),
    `  ${title}`,
  ].join('')
}

function renderTarget(t: TargetCheck): string {
  const unit = t.unit ? ` ${t.unit}` : ''
  const measured = `${t.unit === 'ms' ? milliseconds(t.measured) : t.measured.toFixed(t.unit ? 1 : 3)}${unit}`
  return (
    `  ${t.label.padEnd(58)}${measured.padStart(10)}  ${t.relation} ${t.limit}${unit}`.padEnd(88) +
    (t.pass ? 'PASS' : 'MISS')
  )
}

/** Whole milliseconds hide a refusal that takes microseconds. */
function milliseconds(ms: number): string {
  return ms.toFixed(ms < 10 ? 3 : 1)
}
