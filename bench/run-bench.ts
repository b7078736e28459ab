import { randomBytes } from 'node:crypto'
import { copyFile, mkdtemp, rm, stat } from 'node:fs/promises'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeBenchCertificate } from './bench-certificate.js'
import { startBaseline, type ServerProcess } from './baseline-process.js'
import { bootDataDir, copyDataDir } from './boot-journal.js'
import { measureBoots, type BootSample } from './boot-time.js'
import { busCount, type BusCount } from './bus-batch.js'
import { startBusHemd, type BusHemd } from './bus-hemd.js'
import { checkTargets, type TargetCheck } from './check-targets.js'
import { etagOf } from './etag-of.js'
import { APPROVAL_DEVICES, measureApprovals, type ApprovalsResult } from './cloud-approvals.js'
import { decryptRequestBody, ecdhAesKey, exportPrivate, x25519Pair } from './decrypt-request.js'
import { startHemdTarget, type HemdTarget } from './hemd-target.js'
import { startUnmeteredHemd } from './unmetered-hemd.js'
import { measure } from './measure.js'
import { measureTimings, type TimingResult } from './measure-timings.js'
import { median, medianSample } from './median-sample.js'
import { preflight } from './preflight.js'
import { PRIMITIVE_LOADS } from './primitive-loads.js'
import { benchScenarios, isLoadGroup, type Group, type LoadGroup, type ScenarioInputs } from './scenarios.js'
import type { BaselineKind, LoadSettings, Sample, Scenario } from './types.js'
import { uiImage } from './upload-image.js'

export interface BenchSettings extends LoadSettings {
  rounds: number
  /** Boots timed with the long journal. */
  boots: number
  /** Records of the journal the boots replay (and hemd runs with). */
  journalRecords: number
  groups: readonly Group[]
}

export interface ScenarioResult {
  id: string
  title: string
  /** The median of the rounds (counts summed). */
  median: Sample
  /** MB/s of the median, for transfers. */
  megabytesPerSecond?: number
  /** hemd's peak RSS during this scenario's rounds, for loads on hemd. */
  peakRssBytes?: number
  rounds: Sample[]
  /** For the loads whose bus is watched (group scaling): the median batch size, and each round's count. */
  bus?: { batch: number; rounds: BusCount[] }
}

/** One row of the scaling table: the encrypt load at one connection count (medians of the rounds). */
export interface ScalingRow {
  connections: number
  requestsPerSecond: number
  p50: number
  p99: number
  /** Commands per NATS message from the gateway to the keystore, counted on the bus. */
  batch: number
}

export interface BenchSummary {
  settings: BenchSettings
  machine: { cpus: number; cpuModel: string; node: string; platform: string }
  scenarios: ScenarioResult[]
  targets: TargetCheck[]
  /** hemd's runtime's peak resident set over the whole run, when hemd ran. */
  peakRssBytes: number | undefined
  boot: BootSample | undefined
  /** The boots of a fresh device (no data dir), when boots ran. */
  freshBoot: BootSample | undefined
  /** The timed exchanges (brake, deadlines, outage, reboot), when they ran. */
  timings: TimingResult[] | undefined
  /** The scaling group's table, when it ran. */
  scaling: ScalingRow[] | undefined
  /** Approvals end to end on hem-cloud and on its baseline, when the group ran. */
  approvals: ApprovalsResult | undefined
}

/** The baselines each load group measures against. */
const BASELINES: Record<LoadGroup, BaselineKind[]> = {
  encrypt: ['crypto', 'bus'],
  decrypt: ['crypto'],
  ecdh: ['crypto'],
  sign: ['primitives'],
  hmac: ['primitives'],
  pqc: ['primitives'],
  status: ['get'],
  // Against itself: a copy of hemd without instruments, in the same run.
  metrics: [],
  // Against itself: the same file uncompressed, in the same run.
  static: [],
  scaling: [],
  login: [],
  download: ['download'],
  upload: ['upload'],
}

/**
 * Builds (or takes from the cache) a data dir whose journal holds `journalRecords` records, times
 * the boots of copies of it and the timed exchanges on another (measureTimings), then starts the
 * baselines and hemd (on another copy; the scaling group a second hemd on a watched bus,
 * bus-hemd.ts), each in its own process, and runs every scenario once per round, interleaved (a,
 * b, c, …, then again), so that a slow phase of this noisy machine falls on all of them alike.
 * `progress` hears what is going on; `signal` stops the run (every server is stopped all the same).
 */
export async function runBench(
  settings: BenchSettings,
  progress: (line: string) => void,
  signal: AbortSignal,
): Promise<BenchSummary> {
  const workDir = await mkdtemp(join(tmpdir(), 'hemd-bench-'))
  const running: ServerProcess[] = []
  try {
    let approvals: ApprovalsResult | undefined
    if (settings.groups.includes('approvals')) {
      progress(`approvals end to end on hem-cloud at ${APPROVAL_DEVICES} simulated devices`)
      approvals = await measureApprovals(workDir, await writeBenchCertificate(workDir), settings, progress, signal)
      // The cloud alone needs no device: no data dir to build.
      if (settings.groups.length === 1)
        return summary(
          settings,
          [],
          undefined,
          { boot: undefined, freshBoot: undefined },
          undefined,
          undefined,
          approvals,
        )
    }
    const dataDir = await bootDataDir(settings.journalRecords, progress)
    let boot: BootSample | undefined
    let freshBoot: BootSample | undefined
    if (settings.groups.includes('boot')) {
      progress(`timing ${settings.boots} boot(s) with ${settings.journalRecords} journal records`)
      boot = await measureBoots(dataDir, workDir, settings.boots, signal)
      progress(`timing ${settings.boots} boot(s) of a fresh device`)
      freshBoot = await measureBoots(undefined, workDir, settings.boots, signal)
    }
    let timings: TimingResult[] | undefined
    if (settings.groups.includes('timings')) {
      progress('timing the login brake, the deadlines, a bus outage and a reboot on a hemd of their own')
      timings = await measureTimings(dataDir, workDir, settings.rounds, progress, signal)
    }
    const loads = settings.groups.filter(isLoadGroup)
    if (loads.length === 0) return summary(settings, [], undefined, { boot, freshBoot }, timings, undefined, approvals)
    progress('starting the baselines and hemd')
    const servers = await startServers(loads, dataDir, workDir, running)
    const measured = await measureRounds(servers, settings, progress, signal)
    signal.throwIfAborted()
    const results = scenarioResults(servers.scenarios, measured)
    return summary(
      settings,
      results,
      Math.max(measured.peakRssBytes, await peakOf(servers)),
      { boot, freshBoot },
      timings,
      scalingTable(servers.scenarios, results),
      approvals,
    )
  } finally {
    await Promise.all(running.map((s) => s.stop()))
    await rm(workDir, { recursive: true, force: true })
  }
}

/** The servers under load and the scenarios that load them. */
interface Servers {
  hemd: HemdTarget
  /** The scaling group's hemd, on a watched bus. */
  busHemd: BusHemd | undefined
  /** The metrics group's hemd without instruments. */
  unmetered: HemdTarget | undefined
  scenarios: Scenario[]
}

/** What the rounds measured: each scenario's samples, bus counts and hemd's peak RSS, and the run's peak. */
interface Measured {
  rounds: Map<string, Sample[]>
  buses: Map<string, BusCount[]>
  peaks: Map<string, number>
  peakRssBytes: number
}

/**
 * Starts hemd (on a copy of the data dir), the scaling group's hemd and the baselines the groups
 * need, each pushed onto `running` as it starts (the caller stops them), then checks every scenario once.
 */
async function startServers(
  loads: readonly LoadGroup[],
  dataDir: string,
  workDir: string,
  running: ServerProcess[],
): Promise<Servers> {
  const started = async <T extends ServerProcess>(server: Promise<T>): Promise<T> => {
    const s = await server
    running.push(s)
    return s
  }
  const tls = await writeBenchCertificate(workDir)
  const hemdDir = join(workDir, 'hemd')
  await copyDataDir(dataDir, hemdDir)
  const hemd = await started(startHemdTarget(hemdDir, true))
  const busHemd = loads.includes('scaling') ? await started(startBusHemd(dataDir, workDir)) : undefined
  const unmetered = loads.includes('metrics') ? await started(startUnmeteredHemd(dataDir, workDir)) : undefined
  const bench = benchKeys()
  const inputs = await hemdInputs(hemd, bench, workDir, loads)
  const kinds = [...new Set(loads.flatMap((g) => BASELINES[g]))]
  const baselines = kinds.map((kind) =>
    started(
      startBaseline({
        kind,
        tls,
        workDir,
        keys: { aes: bench.aes.toString('base64'), x25519: exportPrivate(bench.x25519.privateKey) },
        file: inputs.logFile.path,
      }),
    ),
  )
  // Settled together, so that whatever did start is in `running` (stopped below) before a failure is thrown.
  await Promise.allSettled(baselines)
  const urls = Object.fromEntries(await Promise.all(kinds.map(async (kind, i) => [kind, (await baselines[i]!).url])))
  const scenarios = benchScenarios(loads, {
    ...inputs,
    ...(busHemd ? { scaling: { url: busHemd.httpsUrl, kid: busHemd.kid, token: busHemd.token } } : {}),
    ...(unmetered ? { unmetered: { url: unmetered.httpsUrl, kid: unmetered.kid, token: unmetered.token } } : {}),
    urls: { ...urls, hemdHttps: hemd.httpsUrl },
  })
  for (const scenario of scenarios) await preflight(scenario)
  return { hemd, busHemd, unmetered, scenarios }
}

/** The peak RSS of the hemds under load since their last reset. */
async function peakOf({ hemd, busHemd }: Servers): Promise<number> {
  const hemds = busHemd ? [hemd, busHemd] : [hemd]
  return Math.max(...(await Promise.all(hemds.map((h) => h.peakRss()))))
}

/** Every scenario once per round, interleaved (a, b, c, …, then again). */
async function measureRounds(
  servers: Servers,
  settings: BenchSettings,
  progress: (line: string) => void,
  signal: AbortSignal,
): Promise<Measured> {
  const { hemd, busHemd, unmetered, scenarios } = servers
  const rounds = new Map<string, Sample[]>(scenarios.map((s) => [s.id, []]))
  const buses = new Map<string, BusCount[]>(scenarios.filter((s) => s.busCounted).map((s) => [s.id, []]))
  const peaks = new Map<string, number>()
  // The whole run's peak, setup and preflights included, before the per-scenario peaks reset it.
  let peakRssBytes = await peakOf(servers)
  for (let round = 1; round <= settings.rounds; round++) {
    // Every other round backwards: a load that ran second in a pair runs first in the next, so the host's
    // warming and drift do not favour one side of a ratio.
    for (const scenario of round % 2 === 1 ? scenarios : [...scenarios].reverse()) {
      signal.throwIfAborted()
      progress(`round ${round}/${settings.rounds}: ${scenario.id} ${scenario.title}`)
      const target = scenario.busCounted ? busHemd! : scenario.unmetered ? unmetered! : hemd
      if (scenario.hemd) await target.resetPeakRss()
      const before = scenario.busCounted ? await busHemd!.gatewayPublished() : 0
      const cpuBefore = scenario.hemd ? await target.cpuSeconds() : 0
      const sample = await measure(scenario, settings, signal)
      if (scenario.hemd && sample.ok > 0)
        sample.cpuMicrosPerAnswer = (((await target.cpuSeconds()) - cpuBefore) * 1e6) / sample.ok
      rounds.get(scenario.id)!.push(sample)
      // The 2xx answers: those certainly crossed the bus.
      if (scenario.busCounted)
        buses.get(scenario.id)!.push(busCount(before, await busHemd!.gatewayPublished(), sample.ok))
      if (scenario.hemd) {
        const peak = await target.peakRss()
        peaks.set(scenario.id, Math.max(peaks.get(scenario.id) ?? 0, peak))
        peakRssBytes = Math.max(peakRssBytes, peak)
      }
    }
  }
  return { rounds, buses, peaks, peakRssBytes }
}

/** Each scenario's medians, with its throughput, peak RSS and bus batches where it has them. */
function scenarioResults(scenarios: Scenario[], { rounds, buses, peaks }: Measured): ScenarioResult[] {
  return scenarios.map((s) => {
    const median = medianSample(rounds.get(s.id)!)
    const mbps =
      s.payloadBytes === undefined ? {} : { megabytesPerSecond: (median.requestsPerSecond * s.payloadBytes) / 1e6 }
    const rss = peaks.has(s.id) ? { peakRssBytes: peaks.get(s.id)! } : {}
    const bus = buses.get(s.id)
    const batch = bus ? { bus: { batch: medianBatch(bus), rounds: bus } } : {}
    return { id: s.id, title: s.title, median, ...mbps, ...rss, rounds: rounds.get(s.id)!, ...batch }
  })
}

function summary(
  settings: BenchSettings,
  scenarios: ScenarioResult[],
  peakRssBytes: number | undefined,
  { boot, freshBoot }: Pick<BenchSummary, 'boot' | 'freshBoot'>,
  timings: TimingResult[] | undefined,
  scaling?: ScalingRow[],
  approvals?: ApprovalsResult,
): BenchSummary {
  const samples = Object.fromEntries(scenarios.map((r) => [r.id, r.median]))
  return {
    settings,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
    },
    scenarios,
    targets: checkTargets({
      samples,
      rounds: Object.fromEntries(scenarios.map((r) => [r.id, r.rounds])),
      peakRssBytes,
      boot: boot && { ms: boot.medianMs, records: settings.journalRecords },
      freshBootMs: freshBoot?.medianMs,
      timings: Object.fromEntries((timings ?? []).map((t) => [t.id, t.medianMs])),
    }),
    peakRssBytes,
    boot,
    freshBoot,
    timings,
    scaling,
    approvals,
  }
}

/** The median of the rounds' batch sizes; NaN if any round saw no message (that round's batch is unknown). */
function medianBatch(rounds: BusCount[]): number {
  return rounds.some((r) => Number.isNaN(r.batch)) ? Number.NaN : median(rounds.map((r) => r.batch))
}

/** The scaling table: one row per load of the group, by connection count; undefined when the group did not run. */
function scalingTable(scenarios: Scenario[], results: ScenarioResult[]): ScalingRow[] | undefined {
  const rows = scenarios.flatMap((s, i) => {
    const { median: m, bus } = results[i]!
    if (!bus || s.load.kind !== 'http') return []
    return [
      {
        connections: s.load.connections!,
        requestsPerSecond: m.requestsPerSecond,
        p50: m.p50,
        p99: m.p99,
        batch: bus.batch,
      },
    ]
  })
  return rows.length > 0 ? rows : undefined
}

/** The bench's own keys: the bare ceiling decrypts with them what the bench sealed. */
function benchKeys() {
  return { aes: randomBytes(32), x25519: x25519Pair() }
}

type Inputs = Omit<ScenarioInputs, 'urls'> & { logFile: ScenarioInputs['logFile'] & { path: string } }

/**
 * What hemd's side of the scenarios needs, made through its API as a client would: keys, tokens,
 * requests sealed under its keys, the journal file to download.
 */
async function hemdInputs(
  hemd: HemdTarget,
  bench: ReturnType<typeof benchKeys>,
  workDir: string,
  groups: readonly Group[],
): Promise<Inputs> {
  const { client } = hemd
  const peer = x25519Pair()
  const { kid: ecdhKid } = await client.createKey({ label: 'bench-ecdh', type: 'CURVE25519' })
  const devicePublic = Buffer.from((await client.getKey(ecdhKid)).pubkey!, 'base64')
  const sealed = await client.encrypt({ alg: 'AES256-GCM', kid: hemd.kid, msg: randomBytes(64) })
  const b64 = (bytes: Uint8Array | undefined) => Buffer.from(bytes!).toString('base64')
  const hemdDecrypt = JSON.stringify({
    kid: hemd.kid,
    alg: 'AES256-GCM',
    msg: b64(sealed.ciphertext),
    iv: b64(sealed.iv),
    tag: b64(sealed.tag),
  })
  // The oldest file: closed, rotated at its full size, never written again.
  const [logId] = await client.logFiles()
  const logPath = join(workDir, `${logId!}.log`)
  await copyFile(join(workDir, 'hemd', 'journal', `${logId!}.log`), logPath)
  const loginScope = `keymgmt:use:${hemd.kid}`
  const primitives: Inputs['primitives'] = {}
  // One key each, of the type the operation needs; one at a time, as logins are served.
  for (const p of PRIMITIVE_LOADS.filter((p) => groups.includes(p.group))) {
    const { kid } = await client.createKey({ label: `bench-${p.id}`, ...p.key })
    primitives[p.id] = { kid, token: await client.token(`keymgmt:use:${kid}`) }
  }
  return {
    aes: { kid: hemd.kid, token: hemd.token },
    ecdh: { kid: ecdhKid, token: await client.token(`keymgmt:use:${ecdhKid}`) },
    decryptBodies: { hemd: hemdDecrypt, bare: decryptRequestBody(hemd.kid, bench.aes) },
    ecdhBodies: {
      hemd: decryptRequestBody(ecdhKid, ecdhAesKey(peer.privateKey, devicePublic), peer.publicRaw),
      bare: decryptRequestBody(ecdhKid, ecdhAesKey(peer.privateKey, bench.x25519.publicRaw), peer.publicRaw),
    },
    primitives,
    login: async () => void (await client.token(loginScope, true)),
    logFile: { id: logId!, bytes: (await stat(logPath)).size, token: await client.token('logger:get'), path: logPath },
    upload: {
      image: groups.includes('upload') ? await uiImage(workDir) : Buffer.alloc(0),
      token: await client.token('system:upgrade'),
    },
    appTag: groups.includes('static') ? await etagOf(`${hemd.httpsUrl}/app.js`, { 'Accept-Encoding': 'br' }) : '',
  }
}
