import type { ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { DeviceService } from './run-service.js'
import type { ServiceChildConfig } from './service-child-config.js'
import { type StartedProcess, stoppedOnPurpose, stopServiceProcess } from './service-process.js'

/** A service that crashes this often within the window is not started again: the device stops (fail closed). */
const MAX_CRASHES = 5
const CRASH_WINDOW_MS = 60_000
/** The first restart is at once (a crash is rare); repeated ones back off, up to this. */
const MAX_RESTART_DELAY_MS = 5_000

/**
 * The service processes of a `--split` device. One that dies unasked is started again (`restart`),
 * with the same configuration; one that keeps crashing is given up on (`onGiveUp`).
 */
export class ServiceSupervision {
  readonly #children = new Map<DeviceService, ChildProcess>()
  readonly #restarts = new Set<Promise<void>>()
  #closing = false

  constructor(
    private readonly logger: Logger,
    private readonly restart: (config: ServiceChildConfig) => Promise<StartedProcess>,
    private readonly onGiveUp: (service: DeviceService) => void,
  ) {}

  /** Watches a started process; `crashes` are the times its service crashed before. */
  supervise(config: ServiceChildConfig, child: ChildProcess, crashes: number[] = []): void {
    this.#children.set(config.service, child)
    child.once('exit', (code, signal) => {
      if (!stoppedOnPurpose(child) && !this.#closing) this.#crashed(config, crashes, { code, signal })
    })
  }

  /** Stops every process in reverse start order, once the restarts under way are done. */
  async stop(): Promise<void> {
    this.#closing = true
    await Promise.all(this.#restarts)
    for (const child of [...this.#children.values()].reverse()) await stopServiceProcess(child)
  }

  #crashed(config: ServiceChildConfig, crashes: number[], how: Record<string, unknown>): void {
    const now = Date.now()
    const recent = [...crashes.filter((at) => now - at < CRASH_WINDOW_MS), now]
    if (recent.length >= MAX_CRASHES) {
      this.logger.fatal(
        { service: config.service, ...how, crashes: recent.length },
        'service keeps dying: the device stops',
      )
      return this.onGiveUp(config.service)
    }
    const delay = recent.length === 1 ? 0 : Math.min(100 * 2 ** (recent.length - 2), MAX_RESTART_DELAY_MS)
    this.logger.error({ service: config.service, ...how, restartInMs: delay }, 'service process died; restarting it')
    const restart = sleep(delay)
      .then(() => (this.#closing ? undefined : this.restart(config)))
      .then((started) => {
        if (!started) return
        if (this.#closing) return stopServiceProcess(started.child)
        this.supervise(config, started.child, recent)
        this.logger.info({ service: config.service, pid: started.child.pid }, 'service process restarted')
      })
      .catch((err: Error) => {
        if (!this.#closing) this.#crashed(config, recent, { err: err.message })
      })
      .finally(() => this.#restarts.delete(restart))
    this.#restarts.add(restart)
  }
}
