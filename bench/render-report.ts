import type { BootSample } from './boot-time.js'
import type { BenchSummary } from './run-bench.js'
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
  const rows = summary.scenarios.map(({ id, title, median: m, megabytesPerSecond, peakRssBytes }) =>
    [
      id.padEnd(10),
      cell(m.requestsPerSecond.toFixed(m.requestsPerSecond < 100 ? 2 : 0), 8),
      cell(megabytesPerSecond === undefined ? '-' : megabytesPerSecond.toFixed(1), 8),
      cell(m.p50.toFixed(3), 9),
      cell(m.p99.toFixed(3), 9),
      cell(String(m.ok), 8),
      cell(String(m.errors), 7),
      cell(String(m.non2xx), 8),
      cell(peakRssBytes === undefined ? '-' : (peakRssBytes / MB).toFixed(0), 7),
      `  ${title}`,
    ].join(''),
  )
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
          `${'id'.padEnd(10)}${'req/s'.padStart(8)}${'MB/s'.padStart(8)}` +
            `${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}` +
            `${'2xx'.padStart(8)}${'errors'.padStart(7)}${'non-2xx'.padStart(8)}${'RSS MB'.padStart(7)}  scenario`,
          ...rows,
          '',
        ]),
    ...scaling,
    ...boots,
    ...rss,
    ...timings,
    '',
    'targets (against the baselines of this run)',
    ...summary.targets.map(renderTarget),
    '',
  ].join('\n')
}

function renderTarget(t: TargetCheck): string {
  const unit = t.unit ? ` ${t.unit}` : ''
  const measured = `${t.unit === 'ms' ? milliseconds(t.measured) : t.measured.toFixed(t.unit ? 1 : 3)}${unit}`
  return (
    `  ${t.label.padEnd(42)}${measured.padStart(10)}  ${t.relation} ${t.limit}${unit}`.padEnd(72) +
    (t.pass ? 'PASS' : 'MISS')
  )
}

/** Whole milliseconds hide a refusal that takes microseconds. */
function milliseconds(ms: number): string {
  return ms.toFixed(ms < 10 ? 3 : 1)
}
