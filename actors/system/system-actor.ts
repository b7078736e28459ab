import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { LogResult, LogType } from '../../eventstore/types.js'
import type { Hal } from '../../hal/types.js'
import { factoryConfig, type DeviceConfig } from '../../machines/config.js'
import { lifecycleMachine, lifecycleVersion } from '../../machines/lifecycle.js'
import { ServiceHost } from '../bus/service-host.js'
import type { JournalPort } from '../host/journal-port.js'
import { MachineRunner } from '../host/machine-runner.js'
import type { StatusModel, SystemState, VersionModel } from './types.js'

/** fls_state bit for a data integrity failure (journal chain or key repository). */
const FLS_INTEGRITY = 0x08

export interface SystemActorOptions {
  nc: NatsConnection
  hal: Hal
  journal: JournalPort
  logger: Logger
  /** How often the temperature sensor is sampled. */
  sampleIntervalMs?: number
}

/** Owns what version and status show, and the boot's lifecycle (STARTUP ... SHUTDOWN). */
export class SystemActor {
  private readonly host: ServiceHost<SystemState>
  private readonly lifecycle: MachineRunner<typeof lifecycleMachine>
  private readonly config: DeviceConfig
  private readonly bootedAt: number
  private timer: NodeJS.Timeout | undefined
  private flsState = 0

  constructor(private readonly o: SystemActorOptions) {
    this.host = new ServiceHost<SystemState>(o.nc, o.hal.devid, 'system', {}, o.logger)
    this.lifecycle = new MachineRunner({ machine: lifecycleMachine, version: lifecycleVersion }, o.journal)
    this.config = factoryConfig(o.hal.variant)
    this.bootedAt = o.hal.clock.monotonic()
  }

  async start(): Promise<void> {
    const journal = await this.o.journal.status()
    if (!journal.intact) this.flsState |= FLS_INTEGRITY
    const firmware = this.o.hal.boot.firmware
    await this.o.journal.append([
      {
        type: LogType.STARTUP,
        result: this.flsState === 0 ? LogResult.OK : LogResult.ERROR,
        data: { fwv: firmware.version, slot: this.o.hal.boot.active, fls: this.flsState },
      },
    ])
    this.host.start()
    this.publish()
    await this.lifecycle.send(this.flsState === 0 ? { type: 'READY' } : { type: 'FAULT' })
    this.timer = setInterval(() => this.sample(), this.o.sampleIntervalMs ?? 5000)
    this.timer.unref()
  }

  /** Journals SHUTDOWN; the journal itself seals when it closes. */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.host.stop()
    await this.lifecycle.send({ type: 'STOP' }, [{ type: LogType.SHUTDOWN, result: LogResult.OK }])
  }

  private sample(): void {
    const temp = this.o.hal.temperature.readCelsius()
    if (temp !== this.host.state?.status.temp) this.publish()
  }

  private publish(): void {
    this.host.publishState({
      variant: this.o.hal.variant,
      bootedAt: this.bootedAt,
      version: this.version(),
      status: this.status(),
      transport: {
        hostname: this.config.hostname,
        origin: this.config.origin,
        hsts: this.config.http_option_hsts,
        dosprot: this.config.http_option_dosprot_mode,
      },
    })
  }

  private version(): VersionModel {
    const { boot, storage, variant } = this.o.hal
    const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
    return {
      hwv: variant === 'P' ? 'HEM-PPA-SIM-1' : 'HEM-EPA-SIM-1',
      fwv: boot.firmware.version,
      fwk: b64(boot.firmware.publicKey),
      fws: b64(boot.firmware.signature),
      blv: boot.bootloader.version,
      blk: b64(boot.bootloader.publicKey),
      bls: b64(boot.bootloader.signature),
      ...(variant === 'P' ? { sd_csd: storage.csd, sd_cid: storage.cid } : {}),
    }
  }

  private status(): StatusModel {
    const { storage, variant, temperature } = this.o.hal
    return {
      ctx: this.config.ctx,
      fls_state: this.flsState,
      temp: temperature.readCelsius(),
      inited: false,
      // Disks are formatted at personalisation; until then both are unavailable.
      ...(variant === 'P' ? { storage: [`${storage.disk0Sectors}:-`, `${storage.disk1Sectors}:-`] as [string, string] } : {}),
      trusted_ts: this.config.trusted_ts,
    }
  }
}
