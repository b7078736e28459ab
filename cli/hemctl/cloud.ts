// What hemctl's commands on the family's cloud share (auth pair, auth pairings, auth unpair, login
// --remote): the broker the options name, the device's proof to it, and a wait on it that a deadline
// or Ctrl-C ends.
import { readFile } from 'node:fs/promises'
import { setTimeout as pause } from 'node:timers/promises'
import { UsageError } from '../index.js'
import { BrokerClient, fetchTrusting } from '../../client/index.js'
import type { HemctlIo } from './context.js'
import { EXIT } from './failure.js'
import { progress } from './progress.js'

export const cloudOptions = {
  cloud: { type: 'string' },
  'cloud-ca': { type: 'string' },
} as const

export const CLOUD_USAGE = `\
  --cloud URL         the family's cloud, whose broker carries the messages (e.g. https://api.encedo.com)
  --cloud-ca FILE     trust this CA (PEM) for the cloud's certificate (default the system's CAs)
`

/** How often the broker is asked (the family's scripts ask every 5 s, its broker answers at once). */
export const POLL_MS = 3000

export interface CloudValues {
  cloud?: string | undefined
  'cloud-ca'?: string | undefined
}

/** The broker of `--cloud`, trusting `--cloud-ca` when given. */
export async function brokerFor(values: CloudValues, o: { required: true }): Promise<BrokerClient>
export async function brokerFor(values: CloudValues, o: { required: false }): Promise<BrokerClient | undefined>
export async function brokerFor(values: CloudValues, o: { required: boolean }): Promise<BrokerClient | undefined> {
  if (values.cloud === undefined) {
    if (values['cloud-ca'] !== undefined) throw new UsageError('--cloud-ca needs --cloud')
    if (o.required) throw new UsageError('--cloud URL is needed: the broker that carries the messages')
    return undefined
  }
  const file = values['cloud-ca']
  const ca =
    file === undefined
      ? undefined
      : await readFile(file).catch((err: Error) => {
          throw new UsageError(`cannot read the cloud's CA file: ${err.message}`)
        })
  try {
    return new BrokerClient({ url: values.cloud, ...(ca ? { fetch: fetchTrusting(ca) } : {}) })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

/** Why a wait ended without an answer. */
export type Unanswered = 'timeout' | 'interrupted'

/**
 * Asks `check` every POLL_MS until it answers, `seconds` pass or Ctrl-C comes, with a progress line
 * "`what` (Ns)…" on a terminal's stderr. Ctrl-C is caught only while waiting: its default (the
 * process ends) stays for the rest of the command.
 */
export async function waitOnCloud<T>(
  io: HemctlIo,
  what: string,
  seconds: number,
  check: () => Promise<T | undefined>,
): Promise<T | Unanswered> {
  const now = io.now ?? (() => performance.now())
  const sleep = io.sleep ?? ((ms, signal) => pause(ms, undefined, { signal }))
  const interrupts = io.interrupts ?? process
  const stop = new AbortController()
  const interrupt = () => stop.abort()
  interrupts.once('SIGINT', interrupt)
  const line = progress(io, what)
  const start = now()
  try {
    for (;;) {
      const answer = await check()
      if (answer !== undefined) return answer
      const left = seconds * 1000 - (now() - start)
      if (left <= 0) return 'timeout'
      line.spin(`(${Math.floor((now() - start) / 1000)}s)…`)
      // An interrupted pause rejects; the signal says why.
      await sleep(Math.min(POLL_MS, left), stop.signal).catch(() => undefined)
      if (stop.signal.aborted) return 'interrupted'
    }
  } finally {
    interrupts.off('SIGINT', interrupt)
    line.end()
  }
}

/** A flow that ended without its result: the reason on stderr, and exit 4 (not allowed) or the status given. */
export function stopped(io: HemctlIo, command: string, why: string, exit: number = EXIT.DENIED): number {
  io.stderr.write(`hemctl ${command}: ${why}\n`)
  return exit
}

/** A whole number of seconds from the command line, at least 1. */
export function seconds(option: string, text: string): number {
  const n = /^\d{1,9}$/.test(text) ? Number(text) : NaN
  if (!(n >= 1)) throw new UsageError(`${option} must be a whole number of seconds, at least 1`)
  return n
}
