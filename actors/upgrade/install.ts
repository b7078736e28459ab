import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import type { Hal } from '../../hal/index.js'
import {
  type CommandReply,
  type CommandRequest,
  fail,
  type JournalEntry,
  LogResult,
  type LogResultNumber,
  LogType,
} from '../../protocol/index.js'
import type { UpgradeKind } from '../../machines/index.js'
import { orderSupervisor } from '../../bus/index.js'
import { type JournalPort, journalSubject } from '../host/index.js'
import type { Pipeline, UpgradeStateValue } from './pipeline.js'
import { storageFailure } from './storage-failure.js'
import { RefusedAtInstall, unpackStaged } from './unpack-staged.js'

/**
 * The install phase, `install_fw` / `install_ui`: 200 installed, 406 nothing verified (or a
 * downgrade not confirmed), 409 an install running; all journaled as UPGRADE. INSTALL_STARTED is
 * journaled before a slot is written; the machine, in `installing` until the outcome, refuses a
 * second install and any upload meanwhile.
 */
export class Install {
  constructor(private readonly o: { nc: NatsConnection; hal: Hal; journal: JournalPort; logger: Logger }) {}

  async install(pipeline: Pipeline, req: CommandRequest): Promise<CommandReply> {
    const { kind } = pipeline
    await pipeline.settle()
    const refused = await pipeline.refusal({ type: 'INSTALL_STARTED', allowDowngrade: downgradeConfirmed(req) }, req)
    if (refused !== undefined) return this.refuse(pipeline, refused, req)
    // Set by CHECK_PASSED: the machine takes INSTALL_STARTED in `verified` only.
    const verified = pipeline.context.verified!
    let installed: { version: string; sha256: string }
    try {
      installed = await unpackStaged(this.o, kind, verified.sha256)
    } catch (err) {
      const refused = err instanceof RefusedAtInstall
      const reply = refused ? fail(406, 'not_verified', err.message) : storageFailure(err, this.o.logger)
      const entry = auditEntry(req, LogResult.ERROR, refused ? 406 : 500, kind)
      await pipeline.outcome({ type: 'INSTALL_FAILED' }, req, [entry])
      return reply
    }
    // The install stands: a staged copy left behind only takes space, and the next upload or boot discards it.
    // Discarded while `installing`, so that no new upload's staging is opened meanwhile.
    await this.o.hal.staging
      .discard(kind)
      .catch((err: Error) => this.o.logger.error({ kind, err: err.message }, 'the installed image stays staged'))
    const record = verified.downgrade ? { ...installed, downgrade: true as const } : installed
    await pipeline.outcome({ type: 'INSTALL_FINISHED' }, req, [auditEntry(req, LogResult.OK, 200, kind, record)])
    if (kind === 'fw') await this.reboot(req)
    return { status: 200 }
  }

  /** The contract's answer for the state that refused INSTALL_STARTED, audited as the contract asks. */
  private async refuse(pipeline: Pipeline, state: UpgradeStateValue, req: CommandRequest): Promise<CommandReply> {
    const downgrade = pipeline.context.verified?.downgrade
    const reply =
      state === 'installing'
        ? fail(409, 'busy', 'An upload or install is already running')
        : // In `verified` only the downgrade guard refuses.
          state === 'verified' && downgrade
          ? fail(406, 'downgrade_not_confirmed', downgrade)
          : fail(406, 'not_verified', 'No verified image to install: upload it and check it first')
    await this.o.journal.append([auditEntry(req, LogResult.ERROR, reply.status, pipeline.kind)])
    return reply
  }

  /** The reply goes out first: the supervisor acts a moment after it takes the order. */
  private async reboot(req: CommandRequest): Promise<void> {
    await orderSupervisor(this.o.nc, this.o.hal.devid, 'upgrade', req.rid).catch((err: Error) =>
      this.o.logger.error(
        { err: err.message },
        'the supervisor did not take the upgrade reboot; the new firmware boots at the next start',
      ),
    )
  }
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
