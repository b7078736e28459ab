import type { Logger } from 'pino'
import type { ImageVerdict } from '../../image/index.js'
import type { Hal } from '../../hal/index.js'
import { type CommandReply, type CommandRequest, fail } from '../../protocol/index.js'
import type { UpgradeEvent } from '../../machines/index.js'
import { checkStaged } from './check-staged.js'
import { downgradeReason } from './downgrade-reason.js'
import type { Pipeline } from './pipeline.js'

/**
 * The check phase, `check_fw` / `check_ui`: 201 started, 202 running, 200 verified, 406 rejected,
 * 404 nothing uploaded. The check runs in the background and ends in CHECK_PASSED or CHECK_FAILED,
 * which carry what the install and a later 406 need into the machine's context.
 */
export class ImageCheck {
  /** The checks running, for a stop to wait for. */
  private readonly running = new Set<Promise<void>>()

  constructor(private readonly o: { hal: Hal; logger: Logger }) {}

  async check(pipeline: Pipeline, req: CommandRequest): Promise<CommandReply> {
    await pipeline.settle()
    const refused = await pipeline.refusal({ type: 'CHECK_STARTED' }, req)
    if (refused === undefined) {
      const checking = this.run(pipeline)
        .catch((err: Error) => this.o.logger.error({ kind: pipeline.kind, err: err.message }, 'the image check failed'))
        .finally(() => this.running.delete(checking))
      this.running.add(checking)
      return { status: 201 }
    }
    // Refused: how the last check went, if there was one.
    if (refused === 'checking') return { status: 202 }
    if (refused === 'verified' || refused === 'installing') return { status: 200 }
    if (refused === 'rejected') return fail(406, 'rejected', pipeline.context.rejection ?? 'the image was rejected')
    return fail(404, 'not_uploaded', 'Nothing has been uploaded to check')
  }

  async stop(): Promise<void> {
    await Promise.all(this.running)
  }

  private async run(pipeline: Pipeline): Promise<void> {
    const outcome = await this.verify(pipeline).catch((err: Error): UpgradeEvent => {
      // A file system's reason names the staging path on the device: logged, never answered.
      this.o.logger.error({ kind: pipeline.kind, err: err.message }, 'the staged image could not be read')
      return { type: 'CHECK_FAILED', rejection: 'integrity: the staged image could not be read' }
    })
    // Outside the mailbox, but safe: while `checking` no command moves this machine.
    await pipeline.outcome(outcome, undefined)
  }

  private async verify({ kind }: Pipeline): Promise<UpgradeEvent> {
    const staged = await this.o.hal.staging.staged(kind)
    if (!staged) return rejected({ ok: false, reason: 'integrity', message: 'the staged image is gone' })
    let verdict: ImageVerdict
    try {
      verdict = await checkStaged(this.o.hal, kind, staged)
    } finally {
      await staged.close()
    }
    if (!verdict.ok) return rejected(verdict)
    const downgrade = kind === 'fw' && (await downgradeReason(this.o.hal, verdict.header))
    return { type: 'CHECK_PASSED', sha256: verdict.sha256, downgrade }
  }
}

function rejected(verdict: Extract<ImageVerdict, { ok: false }>): UpgradeEvent {
  return { type: 'CHECK_FAILED', rejection: `${verdict.reason}: ${verdict.message}` }
}
