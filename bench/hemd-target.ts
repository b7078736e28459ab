import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { LOGIN_MAX_LIFETIME } from '../actors/auth/bearer.js'
import { HemClient } from '../client/hem-client.js'
import type { ServerProcess } from './baseline-process.js'
import { HEMD_NODE_FLAGS } from '../actors/supervisor/node-flags.js'

/** A running, personalised hemd with an AES-256 key and a token to use it. */
export interface HemdTarget extends ServerProcess {
  httpsUrl: string
  kid: string
  /** Bearer token of scope `keymgmt:use:<kid>`. */
  token: string
  /** The hemd process's peak resident set so far (VmHWM), in bytes. */
  peakRss(): Promise<number>
}

const HEMD = fileURLToPath(new URL('../bin/hemd.js', import.meta.url))
const PASSPHRASES = { user: 'bench user passphrase', master: 'bench master passphrase' }

/**
 * Starts hemd (variant E) as a user would, in its own process, reads its URLs from its banner,
 * personalises it, creates the AES-256 key the encrypt scenario uses and logs in for it.
 */
export async function startHemdTarget(dataDir: string): Promise<HemdTarget> {
  const child = spawn(
    process.execPath,
    [...HEMD_NODE_FLAGS, HEMD, '--variant', 'E', '--data', dataDir, '--http', '127.0.0.1:0', '--https', '127.0.0.1:0', '--log-level', 'warn'],
    // Its own process group: only the bench stops it (see run.ts), once and in order.
    { stdio: ['ignore', 'pipe', 'inherit'], detached: true },
  )
  const exited = once(child, 'exit')
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    await exited
  }
  let banner = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (banner += chunk))
  try {
    const deadline = Date.now() + 30_000
    while (!banner.includes('Ctrl-C stops')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`hemd did not start: ${banner}`)
      await sleep(20)
    }
    const field = (name: string) => new RegExp(`^\\s+${name}\\s+(\\S+)`, 'm').exec(banner)?.[1] ?? ''
    const url = field('http')
    const httpsUrl = field('https')
    await new HemClient({ url }).personalise(PASSPHRASES, {
      user: 'bench',
      email: 'bench@example.com',
      hostname: 'hem.example',
      origin: '*',
      trusted_ts: true,
      trusted_backend: false,
      allow_keysearch: false,
    })
    // Tokens as long-lived as the device allows: the bench never logs in again.
    const client = new HemClient({ url: httpsUrl, insecure: true, passphrase: PASSPHRASES.user, tokenLifetime: LOGIN_MAX_LIFETIME })
    const { kid } = await client.createKey({ label: 'bench', type: 'AES256' })
    const token = await client.token(`keymgmt:use:${kid}`)
    return { url, httpsUrl, pid: child.pid!, kid, token, stop, peakRss: () => peakRss(child.pid!) }
  } catch (error) {
    await stop()
    throw error
  }
}

async function peakRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]
  if (kib === undefined) throw new Error(`no VmHWM in /proc/${pid}/status`)
  return Number(kib) * 1024
}
