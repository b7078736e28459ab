import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import {
  type CommandReply,
  type CommandRequest,
  DIAG_SUFFIX,
  encodeBase64,
  fail,
  FLS,
  type HealthModel,
  LogResult,
  LogType,
  operationAccess,
  type SystemState,
  type TemperatureRange,
  type VersionModel,
} from '../../protocol/index.js'
import { type Hal, nativeEngine, nobleEngine, type TemperatureSensor } from '../../hal/index.js'
import { type lifecycleMachine, machineRegistry, versioned } from '../../machines/index.js'
import { orderSupervisor, ServiceHost, type SupervisorOrder } from '../../bus/index.js'
import { BearerGuard, type JournalPort, journalSubject, MachineRunner } from '../host/index.js'
import { HealthMonitor, type HeapReading } from './health-monitor.js'
import { FaultFollower } from './fault-follower.js'
import { simControl } from './sim-control.js'
import { RecordCheckUnavailableError, SelfTestRunner } from './self-test-runner.js'
import { DiagFaults } from './diag-faults.js'

/** The industrial range: a sensor reading outside it raises fls bit 0x04. */
export const DEFAULT_TEMPERATURE_RANGE: TemperatureRange = { min: -40, max: 85 }

export interface SystemActorOptions {
  nc: NatsConnection
  hal: Hal
  journal: JournalPort
  logger: Logger
  /** How often the sensors (temperature, entropy, heap) are sampled. */
  sampleIntervalMs?: number
  temperatureRange?: TemperatureRange
  heap?: () => HeapReading
  /** How often a self-test runs by itself (default 5 minutes). */
  selfTestIntervalMs?: number
  /** The DIAG build (hemd --diag): serve the `diag_*` operations (docs/diag.md). */
  diag?: boolean
}

/** Owns what version and status show, and the boot's lifecycle (STARTUP ... SHUTDOWN). */
export class SystemActor {
  private readonly host: ServiceHost<SystemState>
  private readonly lifecycle: MachineRunner<typeof lifecycleMachine>
  private readonly bootedAt: number
  private timer: NodeJS.Timeout | undefined
  readonly health: HealthMonitor
  private readonly faults: FaultFollower
  private readonly selfTests: SelfTestRunner
  /** Only in a DIAG build. */
  private readonly diag: DiagFaults | undefined
  /** The chip's sensor as this boot reads it: a DIAG build's `break_temp` breaks it until the next boot. */
  private readonly temperature: TemperatureSensor
  /** Who asked for the shutdown over the API: the SHUTDOWN record names them. */
  private shutdownBy: { subject?: string; rid: string } | undefined

  constructor(private readonly o: SystemActorOptions) {
    // The API's operations are for the principal of a bearer token checked here; a check-in order
    // comes from the auth service, which verified the trusted backend's signature.
    const guard = new BearerGuard({ identity: () => this.faults.identity, clock: o.hal.clock, journal: o.journal })
    this.diag = o.diag
      ? new DiagFaults({
          logger: o.logger,
          journal: o.journal,
          sensor: o.hal.temperature,
          entropy: o.hal.entropy,
          sample: () => this.sample(),
          disableSelfTests: () => this.selfTests.disablePeriodic(),
        })
      : undefined
    this.temperature = this.diag?.temperature ?? o.hal.temperature
    this.host = new ServiceHost<SystemState>(
      o.nc,
      o.hal.devid,
      'system',
      {
        selftest: guard.operation(operationAccess.selftest, (req) => this.selfTest(req)),
        reboot: guard.operation(operationAccess.reboot, (req) => this.order('reboot', LogType.REBOOT, req)),
        shutdown: guard.operation(operationAccess.shutdown, (req) => this.order('shutdown', undefined, req)),
        checkin: { handler: (req) => this.checkin(req) },
        ...(o.hal.faults ? { sim: { handler: simControl(o.hal.faults, this) } } : {}),
        ...this.diag?.operations(),
      },
      o.logger,
    )
    this.lifecycle = new MachineRunner(versioned(machineRegistry.lifecycle), o.journal)
    this.bootedAt = o.hal.clock.monotonic()
    this.health = new HealthMonitor({
      hal: o.hal,
      journal: o.journal,
      logger: o.logger,
      temperatureRange: o.temperatureRange ?? DEFAULT_TEMPERATURE_RANGE,
      temperature: this.temperature,
      ...(o.heap ? { heap: o.heap } : {}),
      onChange: () => this.publish(),
    })
    this.faults = new FaultFollower({
      nc: o.nc,
      devid: o.hal.devid,
      logger: o.logger,
      report: (fault) => this.health.report(fault),
      // Once started: the read model is published only from then on.
      onMirror: () => void (this.host.state && this.publish()),
    })
    this.selfTests = new SelfTestRunner({
      nc: o.nc,
      hal: o.hal,
      journal: o.journal,
      logger: o.logger,
      health: this.health,
      engine: () => (this.faults.engine === nobleEngine.name ? nobleEngine : nativeEngine),
      ...(o.selfTestIntervalMs !== undefined ? { intervalMs: o.selfTestIntervalMs } : {}),
    })
  }

  async start(): Promise<void> {
    await this.health.start()
    const firmware = this.o.hal.boot.firmware
    const fls = this.health.fls
    const { anchorMigrated } = await this.o.journal.status()
    await this.o.journal.append([
      {
        type: LogType.STARTUP,
        result: fls === 0 ? LogResult.OK : LogResult.ERROR,
        data: {
          fwv: firmware.version,
          slot: this.o.hal.boot.running,
          fls,
          // The published development keys (hemd --dev-keys): an auditor sees the device was not for production.
          ...(this.o.hal.developmentKeys ? { dev_keys: true } : {}),
          // Nor was a DIAG build, whose routes inject faults and wipe the device without a token.
          ...(this.o.diag ? { diag: true } : {}),
          // The unsigned anchor of the build this one upgraded, trusted once and re-written signed.
          ...(anchorMigrated ? { anchor_migrated: anchorMigrated } : {}),
        },
      },
    ])
    this.host.start()
    this.faults.start()
    this.publish()
    await this.lifecycle.send(fls === 0 ? { type: 'READY' } : { type: 'FAULT' })
    this.timer = setInterval(() => void this.sample(), this.o.sampleIntervalMs ?? 1000)
    this.timer.unref()
    this.selfTests.start()
  }

  /** Samples the sensors now and publishes what changed; the sampling timer's work. */
  async sample(): Promise<void> {
    try {
      await this.health.sample()
    } catch (err) {
      this.o.logger.error({ err: (err as Error).message }, 'sampling the sensors failed')
    }
    // The status reads the temperature again: a sensor that fails is logged, never left unhandled.
    try {
      if (JSON.stringify(this.status()) !== JSON.stringify(this.host.state?.status)) this.publish()
    } catch (err) {
      this.o.logger.error({ err: (err as Error).message }, 'reading the sensors for the status failed')
    }
  }

  /** Journals SHUTDOWN; the journal itself seals when it closes. */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    this.faults.close()
    await this.host.stop()
    await this.selfTests.stop()
    const by = this.shutdownBy
    try {
      await this.lifecycle.send({ type: 'STOP' }, [
        {
          type: LogType.SHUTDOWN,
          result: LogResult.OK,
          ...(by?.subject !== undefined ? { subject: by.subject } : {}),
          ...(by ? { data: { source: 200, rid: by.rid } } : {}),
        },
      ])
    } catch (err) {
      // The device stops all the same; the next boot finds a run without SHUTDOWN and seals its tail as recovered.
      this.o.logger.error({ err: (err as Error).message }, 'SHUTDOWN could not be journaled')
    }
  }

  /** `GET /api/system/selftest` (crypto-contract §5): a whole self-test, now, answered when it is done. */
  private async selfTest(req: CommandRequest): Promise<CommandReply> {
    try {
      return { status: 200, body: await this.selfTests.run({ req }) }
    } catch (err) {
      if (!(err instanceof RecordCheckUnavailableError)) throw err
      this.o.logger.error({ rid: req.rid, err: err.message }, 'self-test not run: the key store did not answer')
      return fail(503, 'bus_unavailable', 'The key store did not check its records, so no self-test ran; try again')
    }
  }

  /** A trusted backend's order, verified by the auth service: lock the device, or shut it down, until the next boot. */
  private async checkin(req: CommandRequest): Promise<CommandReply> {
    const action = (req.body as { action?: unknown } | undefined)?.action
    if (action !== 'lock' && action !== 'shutdown') return fail(400, 'bad_request', '`action` must be lock or shutdown')
    const bit = action === 'lock' ? FLS.LOCKED : FLS.SHUTDOWN
    await this.health.order(action === 'lock' ? 'CHECKIN_LOCK' : 'CHECKIN_SHUTDOWN', {
      type: LogType.NON_SECURE_STATE,
      result: LogResult.ERROR,
      data: { fls: this.health.fls | bit, raised: bit, source: 'checkin', rid: req.rid },
    })
    return action === 'shutdown' ? this.order('shutdown', undefined, req) : { status: 200 }
  }

  /** Reboot and shutdown: journaled, answered, then carried out by the supervisor. */
  private async order(order: SupervisorOrder, type: number | undefined, req: CommandRequest): Promise<CommandReply> {
    if (type !== undefined) {
      await this.o.journal.append([
        { type, result: LogResult.OK, ...journalSubject(req.principal), data: { source: 200, rid: req.rid } },
      ])
    }
    try {
      await orderSupervisor(this.o.nc, this.o.hal.devid, order, req.rid)
    } catch (err) {
      this.o.logger.error({ rid: req.rid, err: (err as Error).message }, `the ${order} order was not taken`)
      return {
        status: 503,
        body: { error: 'supervisor_unavailable', message: `The device cannot ${order} now; try again` },
      }
    }
    // A shutdown is journaled once, as the last event of the boot (see stop), by whoever asked.
    // stop() waits for this handler (the host's mailbox), so it sees who that was.
    if (order === 'shutdown') this.shutdownBy ??= { ...journalSubject(req.principal), rid: req.rid }
    return { status: 200 }
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
      fwv: this.o.diag ? `${boot.firmware.version}${DIAG_SUFFIX}` : boot.firmware.version,
      fwk: encodeBase64(boot.firmware.publicKey),
      fws: encodeBase64(boot.firmware.signature),
      blv: boot.bootloader.version,
      blk: encodeBase64(boot.bootloader.publicKey),
      bls: encodeBase64(boot.bootloader.signature),
      ...(variant === 'P' ? { sd_csd: storage.csd, sd_cid: storage.cid } : {}),
    }
  }

  private status(): HealthModel {
    const mirror = this.faults.mirror
    return { fls_state: this.health.fls, temp: this.temperature.readCelsius(), ...(mirror ? { mirror } : {}) }
  }
}
