import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { CannedAnswer } from './baseline-canned.js'
import type { CryptoBaselineKeys } from './baseline-crypto.js'
import type { BaselineKind, TlsFiles } from './types.js'

/** What a baseline's process is told on its command line (as JSON). */
export interface BaselineConfig {
  kind: BaselineKind
  tls: TlsFiles
  /** Where it may keep files (the bus baseline's nats-server, the uploads). */
  workDir: string
  /** The crypto baseline's decrypt keys. */
  keys?: CryptoBaselineKeys
  /** The file the download baseline serves. */
  file?: string
  /** The answers the canned baseline gives, by cannedKey. */
  answers?: Record<string, CannedAnswer>
}

/** A server under test running in a process of its own. */
export interface ServerProcess {
  url: string
  pid: number
  stop(): Promise<void>
}

const CHILD = fileURLToPath(new URL('./baseline-child.js', import.meta.url))

/**
 * Starts a baseline in its own process, so that the load generator's CPU work does not run on
 * its event loop (hemd gets the same); resolves once it listens.
 */
export async function startBaseline(config: BaselineConfig): Promise<ServerProcess> {
  // Its own process group: only the bench stops it (see run.ts); it also stops when the bench dies.
  const child = fork(CHILD, [JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  })
  const exited = once(child, 'exit')
  const [message] = (await Promise.race([
    once(child, 'message'),
    exited.then(([code]) => {
      throw new Error(`the ${config.kind} baseline exited with ${String(code)} before it listened`)
    }),
  ])) as [{ port: number }]
  // Every baseline serves HTTPS with the bench certificate, as hemd's loads are over HTTPS.
  return {
    url: `https://127.0.0.1:${message.port}`,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      await exited
    },
  }
}
