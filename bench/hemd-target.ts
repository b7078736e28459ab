import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { LOGIN_MAX_LIFETIME } from '../actors/auth/index.js'
import { HemClient } from '../client/index.js'
import type { ServerProcess } from './baseline-process.js'
import { HEMD_NODE_FLAGS } from '../runtime/index.js'

/** A hemd process that printed its banner: it is ready. */
export interface HemdProcess extends ServerProcess {
  httpsUrl: string
  /** From spawning the process to its banner, in ms. */
  readyMs: number
  /**
   * The device's (hemd's runtime process's) peak resident set
   * (VmHWM) since it started or since resetPeakRss, in bytes.
   */
  peakRss(): Promise<number>
  /** Starts the peak resident set afresh (Linux's clear_refs), so that the next peakRss is one phase's. */
  resetPeakRss(): Promise<void>
  /** The CPU time (user and system) the device's runtime process has used, in seconds. */
  cpuSeconds(): Promise<number>
}

/** A running, personalised hemd with an AES-256 key and a token to use it. */
export interface HemdTarget extends HemdProcess {
  kid: string
  /** Bearer token of scope `keymgmt:use:<kid>`. */
  token: string
  /** A client that logs in as the user, over HTTPS (the login scenario's, too). */
  client: HemClient
}

/** The hemd executable of this build. */
export const HEMD = fileURLToPath(new URL('../bin/hemd.js', import.meta.url))
/** The passphrases of the devices the bench personalises. */
export const BENCH_PASSPHRASES = { user: 'bench user passphrase', master: 'bench master passphrase' }
/** A boot that replays a long journal on a busy machine can take a while. */
const READY_TIMEOUT_MS = 60_000

/**
 * Starts hemd (variant P: the device with every route the bench loads) as a user would, in its
 * own process, and waits for its banner (printed once every service is up), from which it reads
 * its URLs. `extraArgs` go after the bench's own flags (`--bus DIR` for the scaling group).
 */
export async function spawnHemd(
  dataDir: string,
  extraArgs: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<HemdProcess> {
  const started = performance.now()
  const child = spawn(
    process.execPath,
    [
      ...HEMD_NODE_FLAGS,
      HEMD,
      '--variant',
      'P',
      '--data',
      dataDir,
      '--http',
      '127.0.0.1:0',
      '--https',
      '127.0.0.1:0',
      '--log-level',
      'warn',
      // The bench's images are signed with the development vendor key.
      '--dev-keys',
      ...extraArgs,
    ],
    // Its own process group: only the bench stops it (see run.ts), once and in order.
    { stdio: ['ignore', 'pipe', 'inherit'], detached: true, env },
  )
  const exited = once(child, 'exit')
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    await exited
  }
  let banner = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (banner += chunk))
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (!banner.includes('Ctrl-C stops')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`hemd did not start: ${banner}`)
    }
    await sleep(5)
  }
  const readyMs = performance.now() - started
  const field = (name: string) => new RegExp(`^\\s+${name}\\s+(\\S+)`, 'm').exec(banner)?.[1] ?? ''
  return {
    url: field('http'),
    httpsUrl: field('https'),
    pid: child.pid!,
    readyMs,
    stop,
    peakRss: async () => vmHwm(await runtimePid(dataDir)),
    resetPeakRss: async () => writeFile(`/proc/${await runtimePid(dataDir)}/clear_refs`, '5'),
    cpuSeconds: async () => cpuSeconds(await runtimePid(dataDir)),
  }
}

/**
 * Starts hemd (see spawnHemd, which gets `extraArgs`), personalises it unless its data dir is of a
 * device this module personalised before, creates the AES-256 key the cipher scenarios use and
 * logs in for it.
 */
export async function startHemdTarget(
  dataDir: string,
  personalised = false,
  extraArgs: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<HemdTarget> {
  const hemd = await spawnHemd(dataDir, extraArgs, env)
  try {
    if (!personalised) await personalise(hemd.url)
    // Tokens as long-lived as the device allows: the bench never logs in again.
    const client = new HemClient({
      url: hemd.httpsUrl,
      insecure: true,
      passphrase: BENCH_PASSPHRASES.user,
      tokenLifetime: LOGIN_MAX_LIFETIME,
    })
    const { kid } = await client.createKey({ label: 'bench', type: 'AES256' })
    const token = await client.token(`keymgmt:use:${kid}`)
    return { ...hemd, kid, token, client }
  } catch (error) {
    await hemd.stop()
    throw error
  }
}

/** Personalises a fresh device as its owner would, and waits until P has formatted its disks. */
async function personalise(url: string): Promise<void> {
  const client = new HemClient({ url })
  await client.personalise(BENCH_PASSPHRASES, {
    user: 'bench',
    email: 'bench@example.com',
    hostname: 'hem.example',
    origin: '*',
    trusted_ts: true,
    trusted_backend: false,
    allow_keysearch: false,
    // P's network address (configuration only: nothing is sent to it) and the smallest Disk 0.
    ip: '192.168.7.1/24',
    storage_mode: 0x51,
    storage_disk0size: 131072,
    dnsd: false,
  })
  // P formats its disks after personalisation; the bench measures a device at rest.
  const deadline = Date.now() + READY_TIMEOUT_MS
  while ((await client.status()).format !== 'done') {
    if (Date.now() > deadline) throw new Error('hemd did not finish formatting its disks')
    await sleep(100)
  }
}

/** The launcher (bin/hemd) runs the device in a child process and keeps its pid here (runtime/launcher.ts). */
async function runtimePid(dataDir: string): Promise<number> {
  return Number((await readFile(join(dataDir, 'run', 'runtime.pid'), 'utf8')).trim())
}

/** /proc's clock ticks: USER_HZ, 100 on every Linux the device runs on. */
const TICKS_PER_SECOND = 100

async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  // The fields after the command's name, which may hold spaces and parentheses: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const [utime, stime] = [Number(fields[11]), Number(fields[12])]
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`no CPU times in /proc/${pid}/stat`)
  return (utime + stime) / TICKS_PER_SECOND
}

async function vmHwm(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]
  if (kib === undefined) throw new Error(`no VmHWM in /proc/${pid}/status`)
  return Number(kib) * 1024
}
