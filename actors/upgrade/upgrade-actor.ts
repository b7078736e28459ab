import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import {
  type CommandReply,
  type CommandRequest,
  type IdentityState,
  LogResult,
  LogType,
  operationAccess,
  type UpgradeState,
} from '../../protocol/index.js'
import type { Hal } from '../../hal/index.js'
import type { UpgradeKind } from '../../machines/index.js'
import { followReadModels, type ReadModelBus, ServiceHost } from '../../bus/index.js'
import { BearerGuard, type JournalPort } from '../host/index.js'
import { installFactoryWebroot } from './factory-webroot.js'
import { ImageCheck } from './image-check.js'
import { Install } from './install.js'
import { Pipeline } from './pipeline.js'
import { confirmTrial } from './trial-confirm.js'
import { Uploads } from './uploads.js'

export interface UpgradeActorOptions {
  nc: NatsConnection
  hal: Hal
  journal: JournalPort
  logger: Logger
  /** The factory image of the management app (a signed ui image), installed at a start of a P device with no app. */
  factoryWebroot?: string
}

/**
 * Firmware and management-app upgrades: one `upgrade` machine each (Pipeline), which decides
 * every step; the phases act on its decisions. Uploads (uploads.ts) go straight to the HAL's
 * staging; the check (image-check.ts) runs in the background (201, then 202 until it ends); an
 * install (install.ts) checks the staged image again before unpacking it, so the bytes installed
 * are the bytes verified, then writes the inactive firmware slot (and has the supervisor boot it
 * once) or replaces the served app at once; the trial boot confirms (trial-confirm.ts).
 */
export class UpgradeActor {
  readonly host: ServiceHost<UpgradeState>
  private readonly pipelines: Record<UpgradeKind, Pipeline>
  /** The system's fail state, for a trial boot's confirmation; the identity, for the token key. */
  private readonly models: ReadModelBus
  private readonly uploads: Uploads
  private readonly checks: ImageCheck
  private readonly installs: Install

  constructor(private readonly o: UpgradeActorOptions) {
    const publish = () => this.publish()
    this.pipelines = { fw: new Pipeline('fw', o.journal, publish), ui: new Pipeline('ui', o.journal, publish) }
    this.uploads = new Uploads(o)
    this.checks = new ImageCheck(o)
    this.installs = new Install(o)
    this.models = followReadModels(o.nc, o.hal.devid, 'upgrade', ['system', 'auth'], o.logger)
    this.host = new ServiceHost<UpgradeState>(o.nc, o.hal.devid, 'upgrade', this.operations(), o.logger)
  }

  /** Nothing staged survives a boot: an image is checked and installed within one. A P device gets its first app. */
  async start(): Promise<void> {
    const { hal } = this.o
    await hal.staging.discard('fw')
    await hal.staging.discard('ui')
    const outcome = await hal.firmwareSlots.takeOutcome()
    const fw = this.pipelines.fw.runner
    if (outcome?.result === 'rolled_back') {
      await fw.send({ type: 'ROLLED_BACK' }, [
        {
          type: LogType.UPGRADE,
          result: LogResult.ERROR,
          data: { source: 'rollback', slot: outcome.slot, version: outcome.version },
        },
      ])
    }
    if (hal.boot.trial) await fw.send({ type: 'TRIAL_BOOT' })
    if (this.o.factoryWebroot) await installFactoryWebroot(this.o, this.o.factoryWebroot)
    try {
      await this.models.whenReady()
    } catch (err) {
      this.models.close()
      throw err
    }
    this.publish()
    this.host.start()
  }

  async stop(): Promise<void> {
    this.models.close()
    await this.host.stop()
    await this.uploads.stop()
    await this.checks.stop()
  }

  private operations() {
    // Every step of an upload, check or install is for the principal of a bearer token checked here
    // (none on a fresh device); only the supervisor's confirmation of a trial boot is not.
    const guard = new BearerGuard({
      identity: () => this.models.readModel<IdentityState>('auth'),
      clock: this.o.hal.clock,
      journal: this.o.journal,
    })
    const guarded = (handler: (req: CommandRequest) => Promise<CommandReply>, exclusive: boolean) =>
      guard.operation(operationAccess.upgrade, handler, exclusive)
    const { uploads, checks, installs, pipelines } = this
    return {
      ...Object.fromEntries(
        (['fw', 'ui'] as const).flatMap((kind) => [
          [`upload_begin_${kind}`, guarded((req) => uploads.begin(pipelines[kind], req), true)],
          [`check_${kind}`, guarded((req) => checks.check(pipelines[kind], req), true)],
          // Not exclusive, so that a second install finds the first running (409) instead of queueing.
          [`install_${kind}`, guarded((req) => installs.install(pipelines[kind], req), false)],
        ]),
      ),
      upload_chunk: guarded(uploads.chunk, true),
      upload_end: guarded(uploads.end, true),
      upload_abort: guarded(uploads.abort, true),
      confirm: { handler: (req: CommandRequest) => confirmTrial(pipelines.fw, this.models, req), exclusive: true },
    }
  }

  private publish(): void {
    const uis = this.o.hal.webroot?.current()?.sha256
    this.host.publishState({
      fw: this.pipelines.fw.runner.state,
      ui: this.pipelines.ui.runner.state,
      ...(uis ? { uis } : {}),
      ...(this.pipelines.fw.context.confirmed ? { fw_upgrade: true } : {}),
    })
  }
}
