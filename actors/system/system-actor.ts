import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { LogResult, LogType } from '../../eventstore/types.js'
import type { Hal } from '../../hal/types.js'
import { lifecycleMachine, lifecycleVersion } from '../../machines/lifecycle.js'
import { ServiceHost } from '../bus/service-host.js'
import { orderSupervisor, type SupervisorOrder } from '../bus/supervisor-client.js'
import type { CommandReply, CommandRequest } from '../bus/types.js'
import { journalSubject } from '../host/journal-subject.js'
import { runSelfTest } from './self-test.js'
import type { JournalPort } from '../host/journal-port.js'
import { MachineRunner } from '../host/machine-runner.js'
import type { HealthModel, SystemState, VersionModel } from './types.js'
import { encodeBase64 } from '../host/base64.js'

const FLS_KAT = 0x01
const FLS_ENTROPY = 0x02
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
  private readonly bootedAt: number
  private timer: NodeJS.Timeout | undefined
  private flsState = 0
  private lastSelfTest = 0
  /** Who asked for the shutdown over the API: the SHUTDOWN record names them. */
  private shutdownBy: { subject?: string; rid: string } | undefined

  constructor(private readonly o: SystemActorOptions) {
    this.host = new ServiceHost<SystemState>(
      o.nc,
      o.hal.devid,
      'system',
      {
        selftest: { handler: (req) => this.selfTest(req) },
        reboot: { handler: (req) => this.order('reboot', LogType.REBOOT, req) },
        shutdown: { handler: (req) => this.order('shutdown', undefined, req) },
      },
      o.logger,
    )
    this.lifecycle = new MachineRunner({ machine: lifecycleMachine, version: lifecycleVersion }, o.journal)
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
        data: { fwv: firmware.version, slot: this.o.hal.boot.running, fls: this.flsState },
      },
    ])
    this.host.start()
    this.publish()
    await this.lifecycle.send(this.flsState === 0 ? { type: 'READY' } : { type: 'FAULT' })
    this.timer = setInterval(() => this.sample(), this.o.sampleIntervalMs ?? 1000)
    this.timer.unref()
  }

  /** Journals SHUTDOWN; the journal itself seals when it closes. */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.host.stop()
    const by = this.shutdownBy
    await this.lifecycle.send({ type: 'STOP' }, [
      {
        type: LogType.SHUTDOWN,
        result: LogResult.OK,
        ...(by?.subject !== undefined ? { subject: by.subject } : {}),
        ...(by ? { data: { source: 200, rid: by.rid } } : {}),
      },
    ])
  }

  /** `GET /api/system/selftest`: the known-answer tests and an entropy health test, now. */
  private async selfTest(req: CommandRequest): Promise<CommandReply> {
    const result = runSelfTest((n) => this.o.hal.entropy.read(n))
    const raised = (result.failedKats.length > 0 ? FLS_KAT : 0) | (result.entropyOk ? 0 : FLS_ENTROPY)
    const passed = raised === 0
    await this.o.journal.append([
      {
        type: LogType.SELFTEST_PASSED,
        result: passed ? LogResult.OK : LogResult.FAILED,
        ...journalSubject(req.principal),
        data: { source: 200, rid: req.rid, ...(passed ? {} : { failed: result.failedKats, entropy: result.entropyOk }) },
      },
    ])
    this.lastSelfTest = Math.floor(this.o.hal.clock.now() / 1000)
    if ((this.flsState | raised) !== this.flsState) {
      this.flsState |= raised
      this.publish()
    }
    return { status: 200, body: { last_selftest_ts: this.lastSelfTest, fls_state: this.flsState, kat_busy: false, se_state: 0 } }
  }

  /** Reboot and shutdown: journaled, answered, then carried out by the supervisor. */
  private async order(order: SupervisorOrder, type: number | undefined, req: CommandRequest): Promise<CommandReply> {
    if (type !== undefined) {
      await this.o.journal.append([{ type, result: LogResult.OK, ...journalSubject(req.principal), data: { source: 200, rid: req.rid } }])
    }
    try {
      await orderSupervisor(this.o.nc, this.o.hal.devid, order, req.rid)
    } catch (err) {
      this.o.logger.error({ rid: req.rid, err: (err as Error).message }, `the ${order} order was not taken`)
      return { status: 503, body: { error: 'supervisor_unavailable', message: `The device cannot ${order} now; try again` } }
    }
    // A shutdown is journaled once, as the last event of the boot (see stop), by whoever asked.
    // stop() waits for this handler (the host's mailbox), so it sees who that was.
    if (order === 'shutdown') this.shutdownBy ??= { ...journalSubject(req.principal), rid: req.rid }
    return { status: 200 }
  }

  private sample(): void {
    if (JSON.stringify(this.status()) !== JSON.stringify(this.host.state?.status)) this.publish()
  }

  private publish(): void {
    this.host.publishState({
      variant: this.o.hal.variant,
      bootedAt: this.bootedAt,
      version: this.version(),
      status: this.status(),
    })
  }

  private version(): VersionModel {
    const { boot, storage, variant } = this.o.hal
    return {
      hwv: variant === 'P' ? 'HEM-PPA-SIM-1' : 'HEM-EPA-SIM-1',
      fwv: boot.firmware.version,
      fwk: encodeBase64(boot.firmware.publicKey),
      fws: encodeBase64(boot.firmware.signature),
      blv: boot.bootloader.version,
      blk: encodeBase64(boot.bootloader.publicKey),
      bls: encodeBase64(boot.bootloader.signature),
      ...(variant === 'P' ? { sd_csd: storage.csd, sd_cid: storage.cid } : {}),
    }
  }

  private status(): HealthModel {
    return { fls_state: this.flsState, temp: this.o.hal.temperature.readCelsius() }
  }
}
