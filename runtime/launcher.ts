import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { access, mkdir, readlink, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from 'pino'
import type { DataDirLock, SlotName } from '../hal/index.js'
import { HEMD_MALLOC_ENV, HEMD_NODE_FLAGS } from './node-flags.js'

// The launcher starts the runtime: it loads only the parts of the HAL it uses, not the HAL's
// whole face with its crypto engines (about 0.16 s before the runtime could even be spawned).
const hal = await Promise.all([
  import('../hal/errors.js'),
  import('../hal/sim/boot-slots.js'),
  import('../hal/sim/data-dir-lock.js'),
  import('../hal/sim/orphan-process.js'),
]).then(([errors, slots, lock, orphan]) => ({ ...errors, ...slots, ...lock, ...orphan }))

/** The runtime's exit code that asks for the newly installed firmware to be booted. */
export const EXIT_UPGRADE = 75
const RUNTIME_PID_FILE = 'runtime.pid'
/** How long a trial boot may take to confirm its health before it is given up. */
const TRIAL_DEADLINE_MS = 120_000
/** A runtime that dies after it was up is started again, at most this many times in a row. */
const MAX_CRASHES = 5
/** A runtime that stayed up this long ends a row of crashes. */
const STABLE_MS = 60_000

export interface LauncherOptions {
  dataDir: string
  /** The build hemd itself was started from: the factory firmware, slot A until an install. */
  factoryDir: string
  /** Where that build's dependencies are, shared by every slot like a platform's libraries. */
  nodeModules: string
  /** The runtime's arguments (hemd's own, passed on). */
  argv: string[]
  /** The installation's vendor key: an installed slot's build must be signed with it to run. */
  vendorKey: Uint8Array
  logger: Logger
}

export type RuntimeMessage = { type: 'ready'; trial?: 'confirmed' | 'refused' }

/** What a launcher's boots share: the runtime running now, whether a signal asked it to stop, its crashes in a row. */
interface LauncherState {
  child: ChildProcess | undefined
  stopping: boolean
  crashes: number
}

/** Boot again (a rollback, an upgrade, a crash), or exit with this code. */
type Outcome = number | 'again'

/**
 * The simulated bootloader: runs the runtime of the slot it chooses as a child process. An
 * installed firmware is booted once as a trial; it stays only if it confirms its health, and
 * a trial that fails to start, refuses, exits or hangs sends the device back to the old slot
 * (the next runtime journals the rollback). SIGINT and SIGTERM are passed to the runtime.
 */
export async function runLauncher(o: LauncherOptions): Promise<number> {
  await mkdir(join(o.dataDir, 'run'), { recursive: true, mode: 0o700 })
  let lock: DataDirLock
  try {
    lock = await hal.DataDirLock.acquire(o.dataDir)
  } catch (err) {
    if (!(err instanceof hal.HalLockedError)) throw err
    process.stderr.write(`hemd: ${err.message}\n`)
    return 1
  }
  // A launcher killed with SIGKILL takes its runtime down, but not always before the next start.
  await hal.killOrphan(join(o.dataDir, 'run', RUNTIME_PID_FILE), ['--runtime', o.dataDir])
  const state: LauncherState = { child: undefined, stopping: false, crashes: 0 }
  const onSignal = () => {
    state.stopping = true
    state.child?.kill('SIGTERM')
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    for (;;) {
      const outcome = await bootOnce(o, state)
      if (outcome !== 'again') return outcome
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await lock.release()
  }
}

/** One boot: the chosen slot's runtime, run until it exits. */
async function bootOnce(o: LauncherOptions, state: LauncherState): Promise<Outcome> {
  // A signal between two boots (a rollback, an upgrade) found no runtime to pass it to.
  if (state.stopping) return 0
  const bootDir = join(o.dataDir, 'boot')
  const choice = await hal.chooseBoot(bootDir).catch(() => ({
    slot: 'A' as SlotName,
    trial: false,
    rolledBack: undefined,
  }))
  if (choice.rolledBack)
    o.logger.warn(
      { slot: choice.rolledBack.slot, version: choice.rolledBack.version },
      'a trial boot never confirmed: rolled back',
    )
  const build = await buildOf(o, bootDir, choice)
  if (typeof build !== 'object') return build
  const { child, exited, ready } = await startRuntime(o, build.dir, choice, state)
  if (choice.trial) {
    if (ready?.trial !== 'confirmed') {
      o.logger.error({ slot: choice.slot }, 'the new firmware did not confirm its health: rolling back')
      child.kill('SIGKILL')
      await exited
      await hal.abandonTrial(bootDir)
      return state.stopping ? 1 : 'again'
    }
    await hal.commitTrial(bootDir)
    o.logger.info({ slot: choice.slot }, 'the new firmware confirmed its health: it is the active slot now')
  }
  const up = Date.now()
  const [code, signal] = await exited
  state.child = undefined
  if (Date.now() - up >= STABLE_MS) state.crashes = 0
  if (state.stopping) return code ?? 1
  if (code === EXIT_UPGRADE) return 'again'
  if (code === 0) return 0
  // A runtime that never came up will not do better a second time: that is a start failure.
  if (!ready) return code ?? 1
  if (++state.crashes > MAX_CRASHES) {
    o.logger.error({ code, signal }, `the runtime died ${MAX_CRASHES} times in a row: giving up`)
    return 1
  }
  o.logger.error({ code, signal }, 'the runtime died: starting it again')
  await new Promise((resolve) => setTimeout(resolve, 1000 * state.crashes))
  return 'again'
}

/** The build the chosen slot runs (`dir` undefined: the factory build); a refused trial is rolled back. */
async function buildOf(
  o: LauncherOptions,
  bootDir: string,
  choice: { slot: SlotName; trial: boolean },
): Promise<{ dir: string | undefined } | Outcome> {
  let dir: string | undefined
  try {
    dir = await runnableSlot(bootDir, choice.slot, o)
  } catch (err) {
    if (!(err instanceof SlotRefusedError)) throw err
    o.logger.error({ slot: choice.slot, err: err.message }, 'the bootloader refuses the slot')
    if (choice.trial) {
      await hal.abandonTrial(bootDir)
      return 'again'
    }
    process.stderr.write(`hemd: the bootloader refuses slot ${choice.slot}: ${err.message}\n`)
    return 1
  }
  if (!dir && choice.trial) {
    o.logger.error({ slot: choice.slot }, 'the new firmware is not in its slot: rolling back')
    await hal.abandonTrial(bootDir)
    return 'again'
  }
  return { dir }
}

/** Spawns a runtime and waits until it is ready, exits, or (a trial) runs out of time. */
async function startRuntime(
  o: LauncherOptions,
  dir: string | undefined,
  choice: { slot: SlotName; trial: boolean },
  state: LauncherState,
): Promise<{
  child: ChildProcess
  exited: Promise<[number | null, NodeJS.Signals | null]>
  ready: RuntimeMessage | undefined
}> {
  const child = spawn(
    process.execPath,
    [...HEMD_NODE_FLAGS, join(dir ?? o.factoryDir, 'bin', 'hemd.js'), '--runtime', ...o.argv],
    {
      stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      env: {
        ...process.env,
        ...HEMD_MALLOC_ENV,
        HEMD_BOOTED: `${choice.slot}:${choice.trial ? 'trial' : 'active'}`,
      },
    },
  )
  state.child = child
  await writeFile(join(o.dataDir, 'run', RUNTIME_PID_FILE), `${child.pid}\n`, { mode: 0o600 })
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  const ready = await Promise.race([
    once(child, 'message').then(([message]) => message as RuntimeMessage),
    exited.then(() => undefined),
    ...(choice.trial
      ? [new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), TRIAL_DEADLINE_MS).unref())]
      : []),
  ])
  return { child, exited, ready }
}

class SlotRefusedError extends Error {
  override readonly name = 'SlotRefusedError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/**
 * The slot's installed build; undefined for a slot never installed (the factory build runs there).
 * Its tree and signature are checked against the installation's vendor key before any of its code
 * runs (not against the key its own manifest names, which whoever wrote the slot chose).
 */
async function runnableSlot(bootDir: string, slot: SlotName, o: LauncherOptions): Promise<string | undefined> {
  const dir = hal.slotDir(bootDir, slot)
  try {
    await access(join(dir, 'bin', 'hemd.js'))
  } catch {
    return undefined
  }
  // Loaded only when a slot is installed: the image code is no part of every launcher start.
  const { loadFirmware } = await import('../image/firmware-manifest.js')
  try {
    await loadFirmware(dir, o.vendorKey)
  } catch (err) {
    throw new SlotRefusedError((err as Error).message, { cause: err })
  }
  // Module resolution climbs from the slot to `slots/node_modules`: the platform's libraries.
  const link = join(bootDir, 'slots', 'node_modules')
  if ((await readlink(link).catch(() => undefined)) !== o.nodeModules) {
    await mkdir(join(bootDir, 'slots'), { recursive: true, mode: 0o700 })
    await rm(link, { force: true, recursive: true })
    await symlink(o.nodeModules, link, 'dir')
  }
  return dir
}

/** What the launcher put in the environment: `A:active`, `B:trial`, ... */
export function bootedFromEnv(value: string | undefined): { slot: SlotName; trial: boolean } | undefined {
  const match = /^([AB]):(active|trial)$/.exec(value ?? '')
  return match ? { slot: match[1] as SlotName, trial: match[2] === 'trial' } : undefined
}
