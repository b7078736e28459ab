import { spawn, type ChildProcess } from 'node:child_process'
import { HEMD_NODE_FLAGS } from '../../runtime/node-flags.js'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { isProcessAlive } from '../../hal/sim/process-alive.js'
import { distDir } from './device.js'
import { until } from './until.js'

export interface HemdProcess extends StartingHemd {
  httpUrl: string
  httpsUrl: string
  logKey: string
}

export const hemdBin = `${distDir}/bin/hemd.js`
export const auditBin = `${distDir}/bin/hem-audit.js`

/** A started `hemd`, not yet known to be up. */
export interface StartingHemd {
  child: ChildProcess
  stdout(): string
  stderr(): string
  /** SIGINT to the whole process group, as Ctrl-C in a terminal, and wait; resolves with the exit code. */
  interrupt(): Promise<number | null>
}

/** Starts the built `hemd` as a developer would (`--dev-keys`, as `npm start`), without waiting for it. */
export function spawnHemd(t: { teardown(fn: () => unknown): void }, args: string[]): StartingHemd {
  const child = spawn(
    process.execPath,
    [
      ...HEMD_NODE_FLAGS,
      hemdBin,
      ...['--http', '127.0.0.1:0', '--https', '127.0.0.1:0', '--log-level', 'warn', '--dev-keys'],
      ...args,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that `interrupt` can do what a terminal's Ctrl-C does.
      detached: true,
    },
  )
  let out = ''
  let err = ''
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c))
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c))
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT')
      await exited
    }
  })
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    interrupt: async () => {
      process.kill(-child.pid!, 'SIGINT')
      return exited
    },
  }
}

/** Runs the built `hemd` (spawnHemd), and waits for its banner. */
export async function runHemd(t: { teardown(fn: () => unknown): void }, args: string[]): Promise<HemdProcess> {
  const hemd = spawnHemd(t, args)
  const deadline = Date.now() + 90_000
  while (!hemd.stdout().includes('Ctrl-C stops')) {
    if (hemd.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`hemd did not start: ${hemd.stderr()}${hemd.stdout()}`)
    await new Promise((r) => setTimeout(r, 20))
  }
  const field = (name: string) => new RegExp(`^\\s+${name}\\s+(\\S+)`, 'm').exec(hemd.stdout())?.[1] ?? ''
  return { ...hemd, httpUrl: field('http'), httpsUrl: field('https'), logKey: field('log key') }
}

/**
 * A power cut: SIGKILL to hemd's process group, its launcher and the runtime of `dataDir` at once
 * (the launcher killed alone takes the runtime down only once the runtime sees its IPC channel
 * close, which leaves it time to finish what it was doing). Resolves once both are gone; the
 * runtime's nats-server, in a group of its own, dies with it (its parent-death signal).
 */
export async function powerCut(hemd: HemdProcess, dataDir: string): Promise<void> {
  const runtime = Number(await readFile(join(dataDir, 'run', 'runtime.pid'), 'utf8'))
  const exited = hemd.child.exitCode === null && hemd.child.signalCode === null && once(hemd.child, 'exit')
  process.kill(-hemd.child.pid!, 'SIGKILL')
  await exited
  await until('the runtime gone', () => !isProcessAlive(runtime))
}

/** Runs a built executable to completion. */
export async function runToEnd(
  bin: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c))
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c))
  const [code] = (await once(child, 'exit')) as [number | null]
  return { code, stdout, stderr }
}
