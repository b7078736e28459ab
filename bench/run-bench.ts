import { mkdtemp, rm } from 'node:fs/promises'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeBenchCertificate } from './bench-certificate.js'
import { startBaseline, type ServerProcess } from './baseline-process.js'
import { checkTargets, type TargetCheck } from './check-targets.js'
import { startHemdTarget } from './hemd-target.js'
import { measure } from './measure.js'
import { medianSample } from './median-sample.js'
import { preflight } from './preflight.js'
import { benchScenarios } from './scenarios.js'
import type { LoadSettings, Sample, Scenario } from './types.js'

export interface BenchSettings extends LoadSettings {
  rounds: number
}

export interface ScenarioResult {
  id: Scenario['id']
  title: string
  /** The median of the rounds (counts summed). */
  median: Sample
  rounds: Sample[]
}

export interface BenchSummary {
  settings: BenchSettings
  machine: { cpus: number; cpuModel: string; node: string; platform: string }
  scenarios: ScenarioResult[]
  targets: TargetCheck[]
  peakRssBytes: number
}

/**
 * Starts the baselines and hemd, each in its own process, then runs every scenario once per
 * round, interleaved (a, b, c, d-bare, d-hemd, then again), so that a slow phase of this noisy
 * machine falls on all of them alike. `progress` hears what is going on; `signal` stops the run
 * (every server is stopped all the same).
 */
export async function runBench(settings: BenchSettings, progress: (line: string) => void, signal: AbortSignal): Promise<BenchSummary> {
  const workDir = await mkdtemp(join(tmpdir(), 'hemd-bench-'))
  const running: ServerProcess[] = []
  const started = async <T extends ServerProcess>(server: Promise<T>): Promise<T> => {
    const s = await server
    running.push(s)
    return s
  }
  try {
    progress('starting the baselines and hemd')
    const tls = await writeBenchCertificate(workDir)
    const crypto = started(startBaseline({ kind: 'crypto', tls, workDir }))
    const bus = started(startBaseline({ kind: 'bus', tls, workDir }))
    const get = started(startBaseline({ kind: 'get', tls, workDir }))
    const hemdStart = started(startHemdTarget(join(workDir, 'hemd')))
    // Settled together, so that whatever did start is in `running` (stopped below) before a failure is thrown.
    await Promise.allSettled([crypto, bus, get, hemdStart])
    const hemd = await hemdStart
    const scenarios = benchScenarios(
      { crypto: (await crypto).url, bus: (await bus).url, get: (await get).url, hemdHttp: hemd.url, hemdHttps: hemd.httpsUrl },
      hemd.kid,
      hemd.token,
    )
    for (const scenario of scenarios) await preflight(scenario)

    const rounds = new Map<Scenario['id'], Sample[]>(scenarios.map((s) => [s.id, []]))
    for (let round = 1; round <= settings.rounds; round++) {
      for (const scenario of scenarios) {
        signal.throwIfAborted()
        progress(`round ${round}/${settings.rounds}: ${scenario.id} ${scenario.title}`)
        rounds.get(scenario.id)!.push(await measure(scenario, settings, signal))
      }
    }
    signal.throwIfAborted()
    const results = scenarios.map((s) => ({ id: s.id, title: s.title, median: medianSample(rounds.get(s.id)!), rounds: rounds.get(s.id)! }))
    const peakRssBytes = await hemd.peakRss()
    const medians = Object.fromEntries(results.map((r) => [r.id, r.median])) as Record<Scenario['id'], Sample>
    return {
      settings,
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, platform: `${process.platform} ${process.arch}` },
      scenarios: results,
      targets: checkTargets(medians, peakRssBytes),
      peakRssBytes,
    }
  } finally {
    await Promise.all(running.map((s) => s.stop()))
    await rm(workDir, { recursive: true, force: true })
  }
}
