import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import {
  type CommandReply,
  type CommandRequest,
  encodeBase64,
  fail,
  type IdentityState,
  LogResult,
  LogType,
  operationAccess,
  wholeNumber,
} from '../../protocol/index.js'
import type { Hal } from '../../hal/index.js'
import { timedNonce } from '../auth/index.js'
import { followReadModels, type ReadModelBus, ServiceHost } from '../../bus/index.js'
import { BearerGuard, type JournalPort, journalSubject } from '../host/index.js'

/** Log file ids per list answer (seed §4 rule 3). */
export const LIST_PAGE = 128
/** Bytes per chunk of a log file on the bus (nats-server's max_payload is 1 MiB). */
export const CHUNK_BYTES = 128 * 1024
/** How far back from the end of a file its last complete line is looked for. */
const TAIL_PROBE = 64 * 1024
const FILE_ID = /^[0-9a-f]{8}$/

export interface LoggerActorOptions {
  nc: NatsConnection
  hal: Hal
  journal: JournalPort
  logger: Logger
}

/** The first chunk of a log file and the length the whole answer will have. */
export interface LogFileHead {
  size: number
  data: Uint8Array
}

/**
 * The audit log as the API serves it: the log key with a signed nonce, the list of journal
 * files, and the files themselves, read from the journal media in chunks (never whole) and cut
 * after the last complete line, so the file being written can be read too. Reads of the list
 * and of a file are journaled (LOGGER_LIST_LOG, LOGGER_READ_LOG) before they are answered.
 * Each request is served only for a bearer token this service verified itself, with the auth
 * service's public key from the identity it follows.
 */
export class LoggerActor {
  readonly host: ServiceHost<{ ready: true }>
  private readonly identity: ReadModelBus

  constructor(private readonly o: LoggerActorOptions) {
    this.identity = followReadModels(o.nc, o.hal.devid, 'logger', ['auth'], o.logger)
    const guard = new BearerGuard({
      identity: () => this.identity.readModel<IdentityState>('auth'),
      clock: o.hal.clock,
      journal: o.journal,
    })
    const access = operationAccess.logger
    this.host = new ServiceHost(
      o.nc,
      o.hal.devid,
      'logger',
      {
        key: guard.operation(access, () => this.key(), false),
        list: guard.operation(access, (req) => this.list(req), false),
        read: guard.operation(access, (req) => this.read(req), false),
        read_chunk: guard.operation(access, (req) => this.readChunk(req), false),
      },
      o.logger,
    )
  }

  async start(): Promise<void> {
    try {
      await this.identity.whenReady()
    } catch (err) {
      this.identity.close()
      throw err
    }
    this.host.start()
    this.host.publishState({ ready: true })
  }

  async stop(): Promise<void> {
    this.identity.close()
    await this.host.stop()
  }

  /**
   * `GET /api/logger/key`: the log public key, a fresh timed nonce and its Ed25519 signature, and
   * the journal's signed head (its newest durable record), which an auditor checks files against.
   */
  async key(): Promise<CommandReply> {
    const { hal } = this.o
    const nonce = timedNonce(hal.clock.now() / 1000, (n) => hal.entropy.read(n))
    return {
      status: 200,
      body: {
        key: encodeBase64(hal.enclave.logSigner.publicKey),
        nonce: encodeBase64(nonce),
        nonce_signed: encodeBase64(hal.enclave.logSigner.sign(nonce)),
        head: await this.o.journal.head(),
      },
    }
  }

  /** `GET /api/logger/list[/:offset]`: up to 128 file ids, oldest first, and how many there are. */
  async list(req: CommandRequest): Promise<CommandReply> {
    const text = req.params?.offset ?? '0'
    const offset = wholeNumber(text)
    if (offset === undefined) return fail(400, 'bad_request', '`offset` must be a whole number')
    const ids = await this.o.hal.journal.list()
    const found = offset < ids.length
    await this.audit(LogType.LOGGER_LIST_LOG, req, found ? 200 : 404, { offset })
    if (!found) return fail(404, 'not_found', `There are ${ids.length} log files; none at offset ${offset}`)
    return { status: 200, body: { total: ids.length, id: ids.slice(offset, offset + LIST_PAGE) } }
  }

  /** `GET /api/logger/:id`, first chunk: fixes the length served (up to the last complete line). */
  async read(req: CommandRequest): Promise<CommandReply> {
    const id = req.params?.id ?? ''
    const size = FILE_ID.test(id) ? await this.o.hal.journal.size(id) : undefined
    await this.audit(LogType.LOGGER_READ_LOG, req, size === undefined ? 404 : 200, { id: id.slice(0, 64) })
    if (size === undefined) return fail(404, 'not_found', 'No log file with this id')
    const end = await this.lastLineEnd(id, size)
    const head: LogFileHead = { size: end, data: await this.chunk(id, 0, end) }
    return { status: 200, contentType: 'text/plain', body: head }
  }

  /** The chunk at `offset` of a file whose served length `end` the first chunk fixed. */
  async readChunk(req: CommandRequest): Promise<CommandReply> {
    const id = req.params?.id ?? ''
    const { offset, end } = (req.body ?? {}) as { offset?: unknown; end?: unknown }
    const size = FILE_ID.test(id) ? await this.o.hal.journal.size(id) : undefined
    if (size === undefined) return fail(404, 'not_found', 'No log file with this id')
    if (
      !Number.isSafeInteger(offset) ||
      !Number.isSafeInteger(end) ||
      (offset as number) < 0 ||
      (offset as number) >= (end as number) ||
      (end as number) > size
    ) {
      return fail(400, 'bad_request', '`offset` and `end` must lie within the file')
    }
    return { status: 200, body: { data: await this.chunk(id, offset as number, end as number) } }
  }

  private chunk(id: string, offset: number, end: number): Promise<Uint8Array> {
    return this.o.hal.journal.readRange(id, offset, Math.min(CHUNK_BYTES, end - offset))
  }

  /** The length of the file's complete lines: a line being written is not served half. */
  private async lastLineEnd(id: string, size: number): Promise<number> {
    for (let probeEnd = size; probeEnd > 0; probeEnd -= TAIL_PROBE) {
      const start = Math.max(0, probeEnd - TAIL_PROBE)
      const tail = await this.o.hal.journal.readRange(id, start, probeEnd - start)
      const newline = tail.lastIndexOf(0x0a)
      if (newline !== -1) return start + newline + 1
    }
    return 0
  }

  private async audit(
    type: number,
    req: CommandRequest,
    source: 200 | 404,
    data: Record<string, unknown>,
  ): Promise<void> {
    await this.o.journal.append([
      {
        type,
        result: source === 200 ? LogResult.OK : LogResult.FAILED,
        ...journalSubject(req.principal),
        data: { source, rid: req.rid, ...data },
      },
    ])
  }
}
