import type { OwnBus } from '../bus/index.js'
import type { Journal } from '../eventstore/index.js'
import { type Hal, startupTest } from '../hal/index.js'
import { SerialQueue } from '../protocol/index.js'
import { openDeviceJournal } from './device-journal.js'
import { everyStep } from './every-step.js'
import { startInProcess } from './start-in-process.js'
import type { DeviceOptions, Endpoint, StartedServices } from './types.js'

/** What a device's services run on, the same for each of its boots. */
export interface DeviceGround {
  hal: Hal
  /** hemd's own nats-server, if it started one. */
  bus: OwnBus | undefined
  natsUrl: string
  /** The per-service bus users: hemd's own, or those `hemd bus-config` wrote for an outside server (none: --nats). */
  access: Pick<OwnBus, 'credentials'> | undefined
  tls: { certFile: string; keyFile: string; certDer: Uint8Array } | undefined
  /** The device's options as each service gets them (the mirror's backend only where it can mirror). */
  serviceOptions: DeviceOptions
}

/**
 * A device's boots: its services started, restarted by a reboot (one at a time), stopped once,
 * and what stops it with them (its supervisor, hemd's nats-server, the HAL and its data-dir lock).
 */
export class DeviceLifecycle {
  /** The listeners: a reboot comes back where the clients are, on the ports the first boot picked for port 0. */
  endpoints: { http: Endpoint | undefined; https: Endpoint | undefined }
  services: StartedServices | undefined
  /** Why the device stopped by itself, if a fault stopped it. */
  fault: string | undefined
  readonly stopped: Promise<void>
  readonly #o: DeviceOptions
  readonly #ground: DeviceGround
  readonly #restarting = new SerialQueue()
  #journalOpening: Promise<Journal> | undefined
  #supervisor: { stop(): Promise<void> } | undefined
  #stopping: Promise<void> | undefined
  /** Set once the first boot is done: a fault before that fails the start instead. */
  #up = false
  #markStopped!: () => void

  /** `journalOpening`: the journal the first in-process boot takes over, opened while the bus started. */
  constructor(o: DeviceOptions, ground: DeviceGround, journalOpening: Promise<Journal> | undefined) {
    this.#o = o
    this.#ground = ground
    this.#journalOpening = journalOpening
    this.endpoints = { http: o.http, https: o.https }
    this.stopped = new Promise<void>((resolve) => (this.#markStopped = resolve))
  }

  /** Starts the services: in this process, or each in its own (`split`). */
  async boot(): Promise<void> {
    const { hal, natsUrl, access, tls, serviceOptions } = this.#ground
    const o = this.#o
    // A reboot is a power-up for the entropy source too: its start-up test runs again.
    startupTest(hal.entropy)
    // Auth reads the whole history next in this process: recovery has every file checked ahead.
    const opened = o.split
      ? undefined
      : (this.#journalOpening ?? openDeviceJournal(hal, o.firmware.version, o.logger, true))
    this.#journalOpening = undefined
    const options = { ...serviceOptions, ...this.endpoints }
    const split = o.split && (await import('./split-services.js'))
    const started = split
      ? await split.startSplitServices(options, hal, natsUrl, access?.credentials, tls, (service) =>
          this.#giveUp(service),
        )
      : await startInProcess(options, hal, natsUrl, access, tls, opened)
    // A reboot must come back where the clients are: pin the ports port 0 picked (the gateway
    // resolves port 0 itself, so that the pinned port can be listened on again: see runGateway).
    this.endpoints = {
      http: o.http && { host: o.http.host, port: started.httpPort! },
      https: o.https && { host: o.https.host, port: started.httpsPort! },
    }
    this.services = started
    this.#up = true
  }

  /** The supervisor stops with the device. */
  supervisedBy(supervisor: { stop(): Promise<void> }): void {
    this.#supervisor = supervisor
  }

  readonly restart = (): Promise<void> =>
    this.#restarting.run(async () => {
      if (this.#stopping) return
      // Stopped services are never stopped twice, whatever fails after.
      const old = this.services
      this.services = undefined
      try {
        await old?.stop()
        await this.#ground.hal.enclave.activateStagedTls()
        await this.boot()
      } catch (err) {
        // A device that cannot come back is down: release the bus and the data dir, and say so.
        this.#o.logger.error({ err: (err as Error).message }, 'the reboot failed: the device stops')
        void this.stop().catch(() => undefined)
        throw err
      }
    })

  readonly stop = (): Promise<void> =>
    (this.#stopping ??= (async () => {
      await this.#restarting.idle()
      const { bus, hal } = this.#ground
      // The data dir is released whatever failed before.
      try {
        await everyStep(
          [() => this.#supervisor?.stop(), () => this.services?.stop(), () => bus?.server.stop(), () => hal.close()],
          (err) => this.#o.logger.error({ err: err.message }, 'stopping the device: a step failed'),
        )
      } finally {
        this.services = undefined
        this.#markStopped()
      }
    })())

  /** The reboot a firmware install orders: into the new slot by the bootloader, or in place without one. */
  readonly upgrade = async (): Promise<void> => {
    if (!this.#o.onFirmwareInstalled) {
      this.#o.logger.warn(
        'no bootloader runs this device: it restarts in place, and the new firmware boots at the next start of hemd',
      )
      return this.restart()
    }
    this.#o.onFirmwareInstalled()
    await this.stop()
  }

  /** The clean-up of a start that failed: the services and the journal it opened (the caller closes the rest). */
  async abandon(): Promise<void> {
    await this.services?.stop().catch(() => undefined)
    // Opened early, and no eventstore took it over.
    await this.#journalOpening?.then((journal) => journal.close()).catch(() => undefined)
  }

  /** A --split service that keeps crashing stops the whole device. */
  #giveUp(service: string): void {
    this.fault ??= `the ${service} service kept crashing`
    if (this.#up) void this.stop()
  }
}
