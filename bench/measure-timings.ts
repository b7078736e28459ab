import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { copyDataDir } from './boot-journal.js'
import { measureEncryptThroughBusOutage } from './encrypt-through-bus-outage.js'
import { startHemdTarget } from './hemd-target.js'
import { measureLoginBrake } from './login-brake-latency.js'
import { median } from './median-sample.js'
import { measureOversizedEjwtRefusal } from './oversized-ejwt-refusal.js'
import { measureRebootWithDanglingRequests } from './reboot-with-dangling-requests.js'
import { measureStalledUploadTimeout } from './stalled-upload-timeout.js'

/** One timed exchange over the rounds. */
export interface TimingResult {
  id: string
  title: string
  /** Each round's time, in ms, in the order run. */
  ms: number[]
  medianMs: number
  maxMs: number
  /** What else the exchange saw, summed over the rounds. */
  detail?: string
}

/** The timings, by id, in the order they are reported. */
const TITLES = {
  'login-0': 'login after a success, no failure counted (floor 500 ms)',
  'login-3': 'wrong guess after 3 failures in a row (floor 1500 ms)',
  'login-4par': '4 parallel wrong guesses after 1 failure, to the last answer (at the pace of checks, floor 4 s)',
  'ejwt-parse': "10 MB eJWT refused by the auth actor's parse (in process)",
  'ejwt-413': '10 MB login body to its 413 over HTTPS (the body limit answers it)',
  'upload-408': 'stalled upload (100000 announced, 300 sent), last byte to 408, dosprot 1 (500 ms)',
  'outage-enc': "slowest encrypt while the device's nats-server is killed and restarted (8 clients)",
  reboot: 'reboot with 2 requests waiting for their bodies, to status 200 again',
} as const
export type TimingId = keyof typeof TITLES

/**
 * The exchanges whose time is the point (a floor, a deadline, an outage, a reboot), each once
 * per round, on a hemd of their own (a copy of the bench's data dir): they change its
 * configuration, kill its bus and reboot it, which the loads' hemd must not see.
 */
export async function measureTimings(
  dataDir: string,
  workDir: string,
  rounds: number,
  progress: (line: string) => void,
  signal: AbortSignal,
): Promise<TimingResult[]> {
  const dir = join(workDir, 'timings')
  await copyDataDir(dataDir, dir)
  const ms = new Map<TimingId, number[]>()
  const add = (id: TimingId, value: number) => ms.set(id, [...(ms.get(id) ?? []), value])
  let answered = 0
  let unavailable = 0
  let timedOut = 0
  const hemd = await startHemdTarget(dir, true)
  try {
    for (let round = 1; round <= rounds; round++) {
      const step = (what: string) => {
        signal.throwIfAborted()
        progress(`round ${round}/${rounds}: timings: ${what}`)
      }
      step('the login brake')
      const brake = await measureLoginBrake(hemd)
      add('login-0', brake.afterNoFailure)
      add('login-3', brake.afterThreeFailures)
      add('login-4par', brake.fourParallelGuesses)
      step('a 10 MB eJWT')
      const ejwt = await measureOversizedEjwtRefusal(hemd)
      add('ejwt-parse', ejwt.parseMs)
      add('ejwt-413', ejwt.httpMs)
      step('a stalled upload')
      add('upload-408', await measureStalledUploadTimeout(hemd))
      step('encrypts through a bus outage')
      const outage = await measureEncryptThroughBusOutage(hemd, dir)
      add('outage-enc', outage.slowestMs)
      answered += outage.answered
      unavailable += outage.unavailable
      timedOut += outage.timedOut
      step('a reboot with dangling requests')
      add('reboot', await measureRebootWithDanglingRequests(hemd))
    }
  } finally {
    await hemd.stop()
    await rm(dir, { recursive: true, force: true })
  }
  return (Object.keys(TITLES) as TimingId[]).map((id) => {
    const values = ms.get(id) ?? []
    return {
      id,
      title: TITLES[id],
      ms: values,
      medianMs: median(values),
      maxMs: Math.max(...values),
      ...(id === 'outage-enc'
        ? {
            detail:
              `${answered} answered 200, ${unavailable} answered 503 bus_unavailable, ` +
              `${timedOut} answered 504 timeout (in flight when the bus dropped)`,
          }
        : {}),
    }
  })
}
