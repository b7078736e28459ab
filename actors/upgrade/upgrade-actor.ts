import type { NatsConnection } from '@nats-io/transport-node'
import { timingSafeEqual } from 'node:crypto'
import type { Logger } from 'pino'
import {
  checkImage,
  extractArchive,
  HEADER_BYTES,
  type ImageHeader,
  type ImageVerdict,
  loadFirmware,
} from '../../image/index.js'
import {
  type CommandReply,
  type CommandRequest,
  DEADLINE_MS,
  fail,
  type IdentityState,
  type JournalEntry,
  LogResult,
  type LogResultNumber,
  LogType,
  operationAccess,
  SerialQueue,
  type SystemState,
  type UpgradeState,
} from '../../protocol/index.js'
import type { Hal, StagedImage, StagingWriter, Timer } from '../../hal/index.js'
import { upgradeMachine, upgradeVersion, type UpgradeKind } from '../../machines/index.js'
import { followReadModels, orderSupervisor, type ReadModelBus, ServiceHost } from '../../bus/index.js'
import { BearerGuard, EventRefusedError, type JournalPort, journalSubject, MachineRunner } from '../host/index.js'
import { installFactoryWebroot } from './factory-webroot.js'
import { versionGoesBack } from './version-order.js'

export interface UpgradeActorOptions {
  nc: NatsConnection
  hal: Hal
  journal: JournalPort
  logger: Logger
  /** The factory image of the management app (a signed ui image), installed at a start of a P device with no app. */
  factoryWebroot?: string
}

/** How long an open upload may wait for its next chunk: its client is gone, or its token expired mid-upload. */
const UPLOAD_IDLE_MS = 2 * DEADLINE_MS.long

interface Upload {
  id: string
  size: number
  writer: StagingWriter
  /** The idle limit (UPLOAD_IDLE_MS), restarted by every command for the upload. */
  idle?: Timer
}

type UpgradeEventType = Parameters<MachineRunner<typeof upgradeMachine>['send']>[0]['type']

interface Pipeline {
  runner: MachineRunner<typeof upgradeMachine>
  /**
   * Claimed, before any await, by an upload start or an install: neither may overlap the other.
   * The machine cannot see this: its state changes only once the first record is journaled,
   * and an upload start has I/O to do (opening staging) before its event.
   */
  busy: boolean
  upload?: Upload
  verdict?: ImageVerdict
  checking?: Promise<void>
  /**
   * The outcome of a check or an install that the journal did not take: the machine waits in
   * `checking` or `installing`, which no command moves, so it is journaled before the next one.
   */
  unjournaled?: () => Promise<void>
}

/**
 * Firmware and management-app upgrades: one `upgrade` machine each. Uploads arrive from the
 * gateway in bounded chunks and go straight to the HAL's staging; the check runs in the
 * background (201, then 202 until it ends); an install checks the staged image again before
 * unpacking it, so the bytes installed are the bytes verified, then writes the inactive
 * firmware slot (and has the supervisor boot it once) or replaces the served app at once.
 */
export class UpgradeActor {
  readonly host: ServiceHost<UpgradeState>
  private readonly pipelines: Record<UpgradeKind, Pipeline>
  /** The system's fail state, for a trial boot's confirmation; the identity, for the token key. */
  private readonly models: ReadModelBus
  private uploads = 0
  private fwUpgrade = false
  /** Chunks, ends and aborts, and the idle limit's drops: one at a time, as each may abort the writer. */
  private readonly uploadSteps = new SerialQueue()

  constructor(private readonly o: UpgradeActorOptions) {
    this.pipelines = {
      fw: {
        busy: false,
        runner: new MachineRunner(
          { machine: upgradeMachine, version: upgradeVersion, instance: 'fw' },
          o.journal,
          undefined,
          { kind: 'fw' },
        ),
      },
      ui: {
        busy: false,
        runner: new MachineRunner(
          { machine: upgradeMachine, version: upgradeVersion, instance: 'ui' },
          o.journal,
          undefined,
          { kind: 'ui' },
        ),
      },
    }
    this.models = followReadModels(o.nc, o.hal.devid, 'upgrade', ['system', 'auth'], o.logger)
    // Every step of an upload, check or install is for the principal of a bearer token checked here
    // (none on a fresh device); only the supervisor's confirmation of a trial boot is not.
    const guard = new BearerGuard({
      identity: () => this.models.readModel<IdentityState>('auth'),
      clock: o.hal.clock,
      journal: o.journal,
    })
    const guarded = (handler: (req: CommandRequest) => Promise<CommandReply>, exclusive: boolean) =>
      guard.operation(operationAccess.upgrade, handler, exclusive)
    const uploadStep = (handler: (req: CommandRequest) => Promise<CommandReply>) =>
      guarded(this.uploadStep(handler), true)
    const ops = Object.fromEntries(
      (['fw', 'ui'] as const).flatMap((kind) => [
        [`upload_begin_${kind}`, guarded((req) => this.begin(kind, req), true)],
        [`check_${kind}`, guarded((req) => this.check(kind, req), true)],
        // Not exclusive, so that a second install finds the first running (409) instead of queueing.
        [`install_${kind}`, guarded((req) => this.install(kind, req), false)],
      ]),
    )
    this.host = new ServiceHost<UpgradeState>(
      o.nc,
      o.hal.devid,
      'upgrade',
      {
        ...ops,
        upload_chunk: uploadStep((req) => this.chunk(req)),
        upload_end: uploadStep((req) => this.end(req)),
        upload_abort: uploadStep((req) => this.abort(req)),
        confirm: { handler: (req) => this.confirm(req), exclusive: true },
      },
      o.logger,
    )
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
    for (const pipeline of Object.values(this.pipelines)) pipeline.upload?.idle?.cancel()
    await this.uploadSteps.idle()
    for (const pipeline of Object.values(this.pipelines)) {
      await pipeline.checking
      await pipeline.upload?.writer.abort().catch(() => undefined)
    }
  }

  private async begin(kind: UpgradeKind, req: CommandRequest): Promise<CommandReply> {
    const pipeline = this.pipelines[kind]
    const size = (req.body as { size?: unknown } | undefined)?.size
    if (!Number.isSafeInteger(size) || (size as number) < 1)
      return fail(400, 'bad_request', 'The upload size is missing')
    if (pipeline.busy) return running(kind)
    pipeline.busy = true
    try {
      await this.settle(kind)
      // Asked before staging is opened for the new upload: that discards what is staged.
      if (!pipeline.runner.can({ type: 'UPLOAD_STARTED' })) return running(kind)
      let writer: StagingWriter
      try {
        writer = await this.o.hal.staging.begin(kind)
      } catch (err) {
        return storageFailure(err, this.o.logger)
      }
      pipeline.verdict = undefined
      try {
        await this.step(kind, 'UPLOAD_STARTED', req)
      } catch (err) {
        // No upload without its record; the journal's failure is the answer (bus/service-host.ts maps it).
        await writer.abort().catch(() => undefined)
        throw err
      }
      const upload: Upload = { id: `${kind}-${++this.uploads}`, size: size as number, writer }
      pipeline.upload = upload
      this.watch(kind, upload)
      return { status: 200, body: { upload: upload.id } }
    } finally {
      pipeline.busy = false
    }
  }

  private async chunk(req: CommandRequest): Promise<CommandReply> {
    const { upload: id, offset, data } = (req.body ?? {}) as { upload?: unknown; offset?: unknown; data?: unknown }
    const found = this.uploadById(id)
    if (!found) return fail(404, 'no_upload', 'No such upload is running')
    const { kind, upload } = found
    if (
      !(data instanceof Uint8Array) ||
      offset !== upload.writer.written ||
      upload.writer.written + data.length > upload.size
    ) {
      await this.drop(kind, req)
      return fail(400, 'bad_chunk', 'The chunk does not continue the upload')
    }
    try {
      await upload.writer.write(data)
    } catch (err) {
      const reply = storageFailure(err, this.o.logger)
      await this.drop(kind, req)
      return reply
    }
    return { status: 200 }
  }

  private async end(req: CommandRequest): Promise<CommandReply> {
    const found = this.uploadById((req.body as { upload?: unknown } | undefined)?.upload)
    if (!found) return fail(404, 'no_upload', 'No such upload is running')
    const { kind, upload } = found
    if (upload.writer.written !== upload.size) {
      await this.drop(kind, req)
      return fail(406, 'incomplete', `The upload ended after ${upload.writer.written} of ${upload.size} bytes`)
    }
    try {
      await upload.writer.finish()
    } catch (err) {
      const reply = storageFailure(err, this.o.logger)
      await this.drop(kind, req)
      return reply
    }
    // Journaled first: an upload whose end the journal did not take stays open for an abort (or the idle limit).
    await this.step(kind, 'UPLOAD_FINISHED', req)
    this.closeUpload(kind)
    return { status: 200 }
  }

  private async abort(req: CommandRequest): Promise<CommandReply> {
    const found = this.uploadById((req.body as { upload?: unknown } | undefined)?.upload)
    if (found) await this.drop(found.kind, req)
    return { status: 200 }
  }

  /** `check_fw` / `check_ui`: 201 started, 202 running, 200 verified, 406 rejected, 404 nothing uploaded. */
  private async check(kind: UpgradeKind, req: CommandRequest): Promise<CommandReply> {
    const pipeline = this.pipelines[kind]
    const { runner } = pipeline
    await this.settle(kind)
    if (await this.took(kind, 'CHECK_STARTED', req)) {
      pipeline.checking = this.runCheck(kind).catch((err: Error) =>
        this.o.logger.error({ kind, err: err.message }, 'the image check failed to run'),
      )
      return { status: 201 }
    }
    // Refused: how the last check went, if there was one.
    if (runner.matches('checking')) return { status: 202 }
    if (runner.matches('verified') || runner.matches('installing')) return { status: 200 }
    if (runner.matches('rejected')) return rejection(pipeline.verdict)
    return fail(404, 'not_uploaded', 'Nothing has been uploaded to check')
  }

  private async runCheck(kind: UpgradeKind): Promise<void> {
    const pipeline = this.pipelines[kind]
    const verdict = await this.verify(kind).catch((err: Error): ImageVerdict => {
      // A file system's reason names the staging path on the device: logged, never answered.
      this.o.logger.error({ kind, err: err.message }, 'the staged image could not be read')
      return { ok: false, reason: 'integrity', message: 'the staged image could not be read' }
    })
    pipeline.verdict = verdict
    try {
      // Outside the mailbox, but safe: while `checking` no command moves this machine.
      await this.outcome(kind, verdict.ok ? 'CHECK_PASSED' : 'CHECK_FAILED', undefined)
    } finally {
      pipeline.checking = undefined
    }
  }

  private async verify(kind: UpgradeKind): Promise<ImageVerdict> {
    const staged = await this.o.hal.staging.staged(kind)
    if (!staged) return { ok: false, reason: 'integrity', message: 'the staged image is gone' }
    try {
      return await this.checkStaged(kind, staged)
    } finally {
      await staged.close()
    }
  }

  /**
   * `install_fw` / `install_ui`: 200 installed, 406 nothing verified, 409 an install running; all journaled as UPGRADE.
   */
  private async install(kind: UpgradeKind, req: CommandRequest): Promise<CommandReply> {
    const pipeline = this.pipelines[kind]
    // An install holds `busy` from before INSTALL_STARTED until after its outcome: `installing` included.
    if (pipeline.busy) {
      await this.audit(req, LogResult.ERROR, 409, kind)
      return fail(409, 'busy', 'An upload or install is already running')
    }
    pipeline.busy = true
    try {
      await this.settle(kind)
      const verdict = pipeline.verdict
      const downgrade = verdict?.ok && kind === 'fw' && (await this.goesBack(verdict.header))
      if (downgrade && pipeline.runner.can({ type: 'INSTALL_STARTED' }) && !downgradeConfirmed(req)) {
        await this.audit(req, LogResult.ERROR, 406, kind)
        return fail(406, 'downgrade_not_confirmed', downgrade)
      }
      // The verdict is set before the check's outcome is journaled: the machine decides whether it is in force.
      if (!verdict?.ok || !(await this.took(kind, 'INSTALL_STARTED', req))) {
        await this.audit(req, LogResult.ERROR, 406, kind)
        return fail(406, 'not_verified', 'No verified image to install: upload it and check it first')
      }
      let installed: { version: string; sha256: string }
      try {
        installed = await this.unpack(kind, verdict.sha256)
      } catch (err) {
        const refused = err instanceof RefusedAtInstall
        const reply = refused ? fail(406, 'not_verified', err.message) : storageFailure(err, this.o.logger)
        await this.outcome(kind, 'INSTALL_FAILED', req, [auditEntry(req, LogResult.ERROR, refused ? 406 : 500, kind)])
        return reply
      }
      pipeline.verdict = undefined
      const record = downgrade ? { ...installed, downgrade: true as const } : installed
      await this.outcome(kind, 'INSTALL_FINISHED', req, [auditEntry(req, LogResult.OK, 200, kind, record)])
      // The install stands: a staged copy left behind only takes space, and the next upload or boot discards it.
      await this.o.hal.staging
        .discard(kind)
        .catch((err: Error) => this.o.logger.error({ kind, err: err.message }, 'the installed image stays staged'))
    } finally {
      pipeline.busy = false
    }
    if (kind === 'fw') {
      // The reply goes out first: the supervisor acts a moment after it takes the order.
      await orderSupervisor(this.o.nc, this.o.hal.devid, 'upgrade', req.rid).catch((err: Error) =>
        this.o.logger.error(
          { err: err.message },
          'the supervisor did not take the upgrade reboot; the new firmware boots at the next start',
        ),
      )
    }
    return { status: 200 }
  }

  /**
   * Anti-rollback's second rule: a firmware image at the device's floor (one below it fails its
   * check) whose version precedes the running one goes back, which only the owner may confirm.
   * Says why when it does; false otherwise (an image that raises the floor is no downgrade).
   */
  private async goesBack(header: ImageHeader): Promise<string | false> {
    const running = this.o.hal.boot.firmware.version
    const floor = await this.o.hal.firmwareSlots.floor()
    if (header.floor > floor || !versionGoesBack(header.version, running)) return false
    return (
      `${header.version} goes back from the running ${running} at the anti-rollback level ${floor}: ` +
      'the owner confirms a downgrade with POST install_fw {"allow_downgrade": true}'
    )
  }

  /** Against the installation's vendor key, this variant, and for firmware the floor as it is now. */
  private async checkStaged(kind: UpgradeKind, staged: StagedImage): Promise<ImageVerdict> {
    return checkImage(staged, staged.size, {
      vendorKey: this.o.hal.vendorKey,
      kind,
      variant: this.o.hal.variant,
      ...(kind === 'fw' ? { floor: await this.o.hal.firmwareSlots.floor() } : {}),
    })
  }

  /** Checks the staged bytes again and unpacks exactly those: what was verified is what is installed. */
  private async unpack(kind: UpgradeKind, verifiedSha256: string): Promise<{ version: string; sha256: string }> {
    const staged = await this.o.hal.staging.staged(kind)
    if (!staged) throw new RefusedAtInstall('the staged image is gone')
    try {
      const verdict = await this.checkStaged(kind, staged)
      if (!verdict.ok || verdict.sha256 !== verifiedSha256)
        throw new RefusedAtInstall('the staged image changed after its check')
      const payload = { read: (position: number, length: number) => staged.read(HEADER_BYTES + position, length) }
      const extract = (dir: string) =>
        extractArchive(payload, { length: verdict.header.payloadLength }, dir).then(() => undefined)
      if (kind === 'fw') {
        const { version, floor } = verdict.header
        await this.o.hal.firmwareSlots.install(
          async (dir) => {
            await extract(dir)
            await this.bootable(dir, version)
          },
          version,
          floor,
        )
      } else await this.o.hal.webroot!.install(extract, verdict.sha256)
      return { version: verdict.header.version, sha256: verdict.sha256 }
    } finally {
      await staged.close()
    }
  }

  /** What the bootloader will check before it runs the slot, checked before the slot is armed. */
  private async bootable(dir: string, version: string): Promise<void> {
    let build
    try {
      build = await loadFirmware(dir)
    } catch (err) {
      // The bootloader's reason names the slot's path on the device: the ops log has it, the client does not.
      this.o.logger.warn({ err: (err as Error).message }, 'an image to install holds no bootable build')
      throw new RefusedAtInstall('the image holds no bootable build (a signed firmware manifest matching its files)')
    }
    if (build.version !== version || !timingSafeEqual(build.publicKey, this.o.hal.vendorKey)) {
      throw new RefusedAtInstall('the build in the image is not the version, or not from the vendor, its header names')
    }
  }

  /** The supervisor asks once the trial boot's device is up: a device in a fail state does not confirm. */
  private async confirm(req: CommandRequest): Promise<CommandReply> {
    // Asked first: a boot that is no trial says so, whatever the fail state.
    if (!this.pipelines.fw.runner.can({ type: 'CONFIRMED' })) return noTrial()
    await this.models.whenReady()
    const fls = this.models.readModel<SystemState>('system')?.status.fls_state ?? 0xff
    if (fls !== 0)
      return fail(409, 'device_fault', `The new firmware is in a fail state (fls_state ${fls}): not confirmed`)
    if (!(await this.took('fw', 'CONFIRMED', req))) return noTrial()
    this.fwUpgrade = true
    this.publish()
    return { status: 200 }
  }

  private uploadById(id: unknown): { kind: UpgradeKind; upload: Upload } | undefined {
    for (const kind of ['fw', 'ui'] as const) {
      const upload = this.pipelines[kind].upload
      if (upload && upload.id === id) return { kind, upload }
    }
    return undefined
  }

  /** The upload stays open until UPLOAD_FAILED is journaled: an abort or the idle limit drops it again. */
  private async drop(kind: UpgradeKind, req: CommandRequest | undefined): Promise<void> {
    await this.pipelines[kind].upload?.writer.abort().catch(() => undefined)
    await this.step(kind, 'UPLOAD_FAILED', req)
    this.closeUpload(kind)
  }

  private closeUpload(kind: UpgradeKind): void {
    const pipeline = this.pipelines[kind]
    pipeline.upload?.idle?.cancel()
    pipeline.upload = undefined
  }

  /** A chunk, end or abort: each restarts the idle limit of the upload it names, while that stays open. */
  private uploadStep(handler: (req: CommandRequest) => Promise<CommandReply>) {
    return (req: CommandRequest) =>
      this.uploadSteps.run(async () => {
        const found = this.uploadById((req.body as { upload?: unknown } | undefined)?.upload)
        found?.upload.idle?.cancel()
        try {
          return await handler(req)
        } finally {
          if (found && this.pipelines[found.kind].upload === found.upload) this.watch(found.kind, found.upload)
        }
      })
  }

  /**
   * Arms the idle limit of an open upload. A client that stops (gone, or its token expired: then it
   * cannot even abort) would otherwise hold the pipeline in `receiving`, where no new upload starts.
   */
  private watch(kind: UpgradeKind, upload: Upload): void {
    upload.idle?.cancel()
    const expire = () =>
      this.uploadSteps
        .run(async () => {
          // A command restarted the limit while this drop waited for its turn, or ended the upload.
          if (upload.idle !== idle || this.pipelines[kind].upload !== upload) return
          this.o.logger.warn({ kind, upload: upload.id }, 'an upload waited too long for its next chunk: dropped')
          await this.drop(kind, undefined)
        })
        .catch((err: Error) => {
          this.o.logger.error({ kind, err: err.message }, 'an idle upload could not be dropped; trying again later')
          if (this.pipelines[kind].upload === upload) this.watch(kind, upload)
        })
    // Unref'd: an open upload must not keep a stopping process up.
    const idle = this.o.hal.clock.timer(UPLOAD_IDLE_MS, () => void expire(), { unref: true })
    upload.idle = idle
  }

  /** Journals the outcome of a check or an install; one the journal refuses is kept for `settle`. */
  private outcome(
    kind: UpgradeKind,
    type: UpgradeEventType,
    req: CommandRequest | undefined,
    entries?: JournalEntry[],
  ) {
    return this.journalOutcome(kind, () => this.step(kind, type, req, entries))
  }

  /** Journals an outcome the journal refused before, if any: the machine is stuck until it is. */
  private async settle(kind: UpgradeKind): Promise<void> {
    const unjournaled = this.pipelines[kind].unjournaled
    if (unjournaled) await this.journalOutcome(kind, unjournaled)
  }

  private async journalOutcome(kind: UpgradeKind, record: () => Promise<void>): Promise<void> {
    const pipeline = this.pipelines[kind]
    pipeline.unjournaled = undefined
    try {
      await record()
    } catch (err) {
      if (!(err instanceof EventRefusedError)) pipeline.unjournaled = record
      throw err
    }
  }

  private step(
    kind: UpgradeKind,
    type: UpgradeEventType,
    req: CommandRequest | undefined,
    entries: JournalEntry[] = [],
  ) {
    return this.pipelines[kind].runner
      .send({ type }, entries, req ? journalSubject(req.principal).subject : undefined)
      .then(() => this.publish())
  }

  /** Steps, and says whether the machine took the event: false when it refused it (nothing journaled). */
  private took(kind: UpgradeKind, type: UpgradeEventType, req: CommandRequest): Promise<boolean> {
    return this.step(kind, type, req).then(
      () => true,
      (err: unknown) => {
        if (err instanceof EventRefusedError) return false
        throw err
      },
    )
  }

  private audit(req: CommandRequest, result: LogResultNumber, source: number, kind: UpgradeKind): Promise<unknown> {
    return this.o.journal.append([auditEntry(req, result, source, kind)])
  }

  private publish(): void {
    const uis = this.o.hal.webroot?.current()?.sha256
    this.host.publishState({
      fw: this.pipelines.fw.runner.state,
      ui: this.pipelines.ui.runner.state,
      ...(uis ? { uis } : {}),
      ...(this.fwUpgrade ? { fw_upgrade: true } : {}),
    })
  }
}

class RefusedAtInstall extends Error {
  override readonly name = 'RefusedAtInstall'
}

function auditEntry(
  req: CommandRequest,
  result: LogResultNumber,
  source: number,
  kind: UpgradeKind,
  installed?: { version: string; sha256: string; downgrade?: true },
): JournalEntry {
  return {
    type: LogType.UPGRADE,
    result,
    ...journalSubject(req.principal),
    data: { source, rid: req.rid, kind, ...installed },
  }
}

/** `POST install_fw {"allow_downgrade": true}`: the owner's word that going back is meant. */
function downgradeConfirmed(req: CommandRequest): boolean {
  return (req.body as { allow_downgrade?: unknown } | undefined)?.allow_downgrade === true
}

function running(kind: UpgradeKind): CommandReply {
  const what = kind === 'fw' ? 'firmware' : 'management app'
  return fail(409, 'busy', `An upload, check or install of the ${what} is running`)
}

function noTrial(): CommandReply {
  return fail(409, 'no_trial', 'This boot is not a trial boot')
}

function rejection(verdict: ImageVerdict | undefined): CommandReply {
  const message = verdict && !verdict.ok ? `${verdict.reason}: ${verdict.message}` : 'the image was rejected'
  return fail(406, 'rejected', message)
}

/** Staging or a slot could not be written: the device's fault, never the client's. */
function storageFailure(err: unknown, logger: Logger): CommandReply {
  const code = (err as NodeJS.ErrnoException).code
  logger.error({ err: (err as Error).message }, 'an upgrade could not be stored')
  if (code === 'ENOSPC' || code === 'EDQUOT') return fail(507, 'no_space', 'The device has no room for the image')
  return fail(500, 'storage_error', 'The image could not be stored')
}
