import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { accessSync, constants } from 'node:fs'
import { readFile, readdir, rm } from 'node:fs/promises'
import { delimiter, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { killOrphan } from '../hal/index.js'
import { NatsServerError } from './errors.js'

export interface NatsServerOptions {
  configFile: string
  portsFileDir: string
  /** The binary; `nats-server` from PATH by default. */
  binary?: string
  /** Restarts the server when it dies unexpectedly (the bus must come back by itself). */
  restart?: boolean
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void
  onRestart?: (pid: number) => void
}

/** A nats-server child process on loopback, supervised: restarted with backoff if it dies. */
export class NatsServer {
  private child: ChildProcess | undefined
  private stopping = false
  private restarts = 0
  private portValue = 0

  private constructor(private readonly options: NatsServerOptions) {}

  static async start(options: NatsServerOptions): Promise<NatsServer> {
    const server = new NatsServer(options)
    await server.launch()
    return server
  }

  get port(): number {
    return this.portValue
  }

  get url(): string {
    return `nats://127.0.0.1:${this.portValue}`
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  async stop(): Promise<void> {
    this.stopping = true
    const child = this.child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  }

  private async launch(): Promise<void> {
    // Where setpriv is missing (SETPRIV below), a hemd killed with SIGKILL leaves its nats-server running: stop it, if
    // it really is ours.
    await killOrphan(join(this.options.portsFileDir, PID_FILE), ['nats-server', this.options.configFile])
    await clearPortsFiles(this.options.portsFileDir)
    const [command, args] = serverCommand(this.options.binary ?? 'nats-server', this.options.configFile)
    // Its own process group: a Ctrl-C meant for hemd must not take the bus down before the
    // actors have journaled their stop. hemd stops it last.
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true })
    this.child = child
    let stderr = ''
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4096)
    })
    // An error before 'spawn' means it cannot run. One after (a failed kill) changes nothing, 'exit' tells when it is
    // gone: the listener stays for good, since an 'error' event nobody listens to is thrown.
    const failure = await new Promise<Error | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined))
      child.on('error', resolve)
    })
    if (failure) {
      throw new NatsServerError(
        `cannot run nats-server (${failure.message}); install it with: sudo apt-get install nats-server`,
        { cause: failure },
      )
    }
    this.portValue = await this.waitForPort(child, () => stderr)
    child.once('exit', (code, signal) => this.exited(code, signal))
  }

  private async waitForPort(child: ChildProcess, stderr: () => string): Promise<number> {
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new NatsServerError(`nats-server exited at start: ${stderr().trim()}`)
      }
      const port = await readPort(this.options.portsFileDir, child.pid!)
      if (port) return port
      await sleep(20)
    }
    child.kill('SIGKILL')
    throw new NatsServerError('nats-server did not report its port within 10 s')
  }

  private exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopping) return
    this.options.onExit?.(code, signal)
    if (!this.options.restart) return
    const delay = Math.min(2000, 100 * 2 ** Math.min(this.restarts++, 5))
    setTimeout(() => {
      if (this.stopping) return
      this.launch().then(
        () => {
          this.restarts = 0
          this.options.onRestart?.(this.child!.pid!)
        },
        () => this.exited(null, null),
      )
    }, delay).unref()
  }
}

/**
 * util-linux's setpriv, which sets the parent-death signal and then execs the server (so that the
 * child's pid is the server's own): when the process that started the server dies, even by
 * kill -9, the kernel stops the server with it. Without setpriv the next start on the same data
 * dir stops such an orphan (killOrphan above).
 */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find(isExecutable)

function serverCommand(binary: string, configFile: string): [string, string[]] {
  const candidates = binary.includes('/')
    ? [binary]
    : (process.env.PATH?.split(delimiter) ?? []).map((dir) => join(dir, binary))
  const path = candidates.find(isExecutable)
  if (!path) {
    throw new NatsServerError(
      `cannot run ${binary}: not found or not executable; install it with: sudo apt-get install nats-server`,
    )
  }
  const args = ['-c', configFile]
  return SETPRIV ? [SETPRIV, ['--pdeathsig', 'TERM', '--', path, ...args]] : [path, args]
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** nats-server writes its pid here (`pid_file` in the generated configuration). */
export const PID_FILE = 'nats-server.pid'

async function readPort(dir: string, pid: number): Promise<number | undefined> {
  try {
    const ports = JSON.parse(await readFile(join(dir, `nats-server_${pid}.ports`), 'utf8')) as {
      nats?: string[]
    }
    const url = ports.nats?.[0]
    return url ? Number(new URL(url).port) : undefined
  } catch {
    return undefined
  }
}

async function clearPortsFiles(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[])
  await Promise.all(names.filter((n) => n.endsWith('.ports')).map((n) => rm(join(dir, n), { force: true })))
}
