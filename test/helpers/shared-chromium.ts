// One Chromium serves a whole test run: tap's `before` (test/tools/run-before.ts) starts it and
// its `after` stops it; each page gets a browser context of its own in it, as isolated as a fresh
// browser's (cookies, storage, certificates accepted) but without a browser's start-up each time.
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

export const CHROMIUM = '/usr/bin/chromium'

/** Where the running browser of this checkout is described (tap's own folder, left out of git). */
const STATE = fileURLToPath(new URL('../../.tap/chromium.json', import.meta.url))

interface SharedChromium {
  pid: number
  /** The debugging endpoint that playwright's connectOverCDP takes. */
  endpoint: string
  profile: string
}

/**
 * The flags of a headless browser on a host without a network: no background connections
 * (refused here, many at a time), and every host name resolved to loopback, so that a page
 * reaches a device at the hostname its configuration gives.
 */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // As playwright launches it: a screenshot as wide as its viewport.
  '--hide-scrollbars',
  '--host-resolver-rules=MAP * 127.0.0.1',
]

/** What the run's `before` wrote of its browser, if anything. */
function recorded(): SharedChromium | undefined {
  return existsSync(STATE) ? (JSON.parse(readFileSync(STATE, 'utf8')) as SharedChromium) : undefined
}

/** The run's browser, if one is running. */
export function sharedChromium(): SharedChromium | undefined {
  const shared = recorded()
  if (!shared) return undefined
  try {
    process.kill(shared.pid, 0)
    return shared
  } catch {
    return undefined
  }
}

/** Starts the run's browser (stopping one a run left behind) and describes it for the test processes. */
export async function startSharedChromium(): Promise<void> {
  await stopSharedChromium()
  if (!existsSync(CHROMIUM)) return
  const profile = await mkdtemp(join(tmpdir(), 'hemd-chromium-'))
  const child = spawn(CHROMIUM, [...CHROMIUM_FLAGS, '--remote-debugging-port=0', `--user-data-dir=${profile}`], {
    detached: true,
    stdio: 'ignore',
  })
  child.unref()
  // Chromium writes the port it listens on into its profile once it does.
  const portFile = join(profile, 'DevToolsActivePort')
  for (let waited = 0; !existsSync(portFile) || (await readFile(portFile, 'utf8')).split('\n').length < 2; waited++) {
    if (child.exitCode !== null || waited > 300) {
      child.kill('SIGKILL')
      throw new Error(`${CHROMIUM} did not start (exit code ${child.exitCode})`)
    }
    await sleep(50)
  }
  const port = Number((await readFile(portFile, 'utf8')).split('\n')[0])
  const shared: SharedChromium = { pid: child.pid!, endpoint: `http://127.0.0.1:${port}`, profile }
  await writeFile(STATE, JSON.stringify(shared))
}

export async function stopSharedChromium(): Promise<void> {
  const shared = recorded()
  if (!shared) return
  try {
    // Its own process group (detached): its renderers and helpers go with it.
    process.kill(-shared.pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
  await rm(shared.profile, { recursive: true, force: true })
  await rm(STATE, { force: true })
}
