import type { Logger } from 'pino'
import type { Hal, StagingWriter, Timer } from '../../hal/index.js'
import { type CommandReply, type CommandRequest, DEADLINE_MS, fail, SerialQueue } from '../../protocol/index.js'
import type { UpgradeKind } from '../../machines/index.js'
import type { Pipeline } from './pipeline.js'
import { storageFailure } from './storage-failure.js'

/** How long an open upload may wait for its next chunk: its client is gone, or its token expired mid-upload. */
const UPLOAD_IDLE_MS = 2 * DEADLINE_MS.long

interface Upload {
  id: string
  pipeline: Pipeline
  size: number
  writer: StagingWriter
  /** The idle limit (UPLOAD_IDLE_MS), restarted by every command for the upload. */
  idle?: Timer
}

type Handler = (req: CommandRequest) => Promise<CommandReply>

/**
 * The upload phase: uploads arrive from the gateway in bounded chunks and go straight to the
 * HAL's staging. UPLOAD_STARTED is journaled before staging is opened (which discards what is
 * staged), so the machine's `receiving` keeps every other upload and install out meanwhile.
 */
export class Uploads {
  private readonly open = new Map<UpgradeKind, Upload>()
  private count = 0
  /** Chunks, ends and aborts, and the idle limit's drops: one at a time, as each may abort the writer. */
  private readonly steps = new SerialQueue()

  constructor(private readonly o: { hal: Hal; logger: Logger }) {}

  /** `upload_begin_<kind>` `{size}`: 200 `{upload}`, 400 no size, 409 an upload, check or install running. */
  async begin(pipeline: Pipeline, req: CommandRequest): Promise<CommandReply> {
    const { kind } = pipeline
    const size = (req.body as { size?: unknown } | undefined)?.size
    if (!Number.isSafeInteger(size) || (size as number) < 1)
      return fail(400, 'bad_request', 'The upload size is missing')
    await pipeline.settle()
    if ((await pipeline.refusal({ type: 'UPLOAD_STARTED' }, req)) !== undefined) return running(kind)
    let writer: StagingWriter
    try {
      writer = await this.o.hal.staging.begin(kind)
    } catch (err) {
      const reply = storageFailure(err, this.o.logger)
      // One the journal refuses is journaled before the pipeline's next command: `receiving` has no upload to drop.
      await pipeline.outcome({ type: 'UPLOAD_FAILED' }, req)
      return reply
    }
    const upload: Upload = { id: `${kind}-${++this.count}`, pipeline, size: size as number, writer }
    this.open.set(kind, upload)
    this.watch(upload)
    return { status: 200, body: { upload: upload.id } }
  }

  /** `upload_chunk` `{upload, offset, data}`: a chunk that does not continue the upload drops it. */
  readonly chunk: Handler = this.step(async (req, upload) => {
    const { offset, data } = (req.body ?? {}) as { offset?: unknown; data?: unknown }
    if (
      !(data instanceof Uint8Array) ||
      offset !== upload.writer.written ||
      upload.writer.written + data.length > upload.size
    ) {
      await this.drop(upload, req)
      return fail(400, 'bad_chunk', 'The chunk does not continue the upload')
    }
    try {
      await upload.writer.write(data)
    } catch (err) {
      const reply = storageFailure(err, this.o.logger)
      await this.drop(upload, req)
      return reply
    }
    return { status: 200 }
  })

  /** `upload_end` `{upload}`: 200 uploaded, 406 fewer bytes than announced (dropped). */
  readonly end: Handler = this.step(async (req, upload) => {
    const { writer, size, pipeline } = upload
    if (writer.written !== size) {
      await this.drop(upload, req)
      return fail(406, 'incomplete', `The upload ended after ${writer.written} of ${size} bytes`)
    }
    try {
      await writer.finish()
    } catch (err) {
      const reply = storageFailure(err, this.o.logger)
      await this.drop(upload, req)
      return reply
    }
    // Journaled first: an upload whose end the journal did not take stays open for an abort (or the idle limit).
    await pipeline.step({ type: 'UPLOAD_FINISHED' }, req)
    this.close(upload)
    return { status: 200 }
  })

  /** `upload_abort` `{upload}`: 200 whether or not the upload was still open. */
  readonly abort = (req: CommandRequest): Promise<CommandReply> =>
    this.steps.run(async () => {
      const upload = this.byId(req)
      upload?.idle?.cancel()
      if (upload) await this.rewatchAfter(upload, () => this.drop(upload, req))
      return { status: 200 }
    })

  async stop(): Promise<void> {
    for (const upload of this.open.values()) upload.idle?.cancel()
    await this.steps.idle()
    for (const upload of this.open.values()) await upload.writer.abort().catch(() => undefined)
  }

  /**
   * A chunk or an end of the upload the request names (404 when none is open): one at a time, each
   * restarting the idle limit of its upload while that stays open.
   */
  private step(handler: (req: CommandRequest, upload: Upload) => Promise<CommandReply>): Handler {
    return (req) =>
      this.steps.run(async () => {
        const upload = this.byId(req)
        if (!upload) return fail(404, 'no_upload', 'No such upload is running')
        upload.idle?.cancel()
        return this.rewatchAfter(upload, () => handler(req, upload))
      })
  }

  private async rewatchAfter<T>(upload: Upload, run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } finally {
      if (this.open.get(upload.pipeline.kind) === upload) this.watch(upload)
    }
  }

  private byId(req: CommandRequest): Upload | undefined {
    const id = (req.body as { upload?: unknown } | undefined)?.upload
    for (const upload of this.open.values()) if (upload.id === id) return upload
    return undefined
  }

  /** The upload stays open until UPLOAD_FAILED is journaled: an abort or the idle limit drops it again. */
  private async drop(upload: Upload, req: CommandRequest | undefined): Promise<void> {
    await upload.writer.abort().catch(() => undefined)
    await upload.pipeline.step({ type: 'UPLOAD_FAILED' }, req)
    this.close(upload)
  }

  private close(upload: Upload): void {
    upload.idle?.cancel()
    if (this.open.get(upload.pipeline.kind) === upload) this.open.delete(upload.pipeline.kind)
  }

  /**
   * Arms the idle limit of an open upload. A client that stops (gone, or its token expired: then it
   * cannot even abort) would otherwise hold the pipeline in `receiving`, where no new upload starts.
   */
  private watch(upload: Upload): void {
    upload.idle?.cancel()
    const { kind } = upload.pipeline
    const expire = () =>
      this.steps
        .run(async () => {
          // A command restarted the limit while this drop waited for its turn, or ended the upload.
          if (upload.idle !== idle || this.open.get(kind) !== upload) return
          this.o.logger.warn({ kind, upload: upload.id }, 'an upload waited too long for its next chunk: dropped')
          await this.drop(upload, undefined)
        })
        .catch((err: Error) => {
          this.o.logger.error({ kind, err: err.message }, 'an idle upload could not be dropped; trying again later')
          if (this.open.get(kind) === upload) this.watch(upload)
        })
    // Unref'd: an open upload must not keep a stopping process up.
    const idle = this.o.hal.clock.timer(UPLOAD_IDLE_MS, () => void expire(), { unref: true })
    upload.idle = idle
  }
}

function running(kind: UpgradeKind): CommandReply {
  const what = kind === 'fw' ? 'firmware' : 'management app'
  return fail(409, 'busy', `An upload, check or install of the ${what} is running`)
}
