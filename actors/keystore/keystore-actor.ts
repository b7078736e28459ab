import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import {
  chooseEngine,
  type CryptoEngine,
  type Hal,
  nativeEngine,
  nobleEngine,
  postQuantum,
  type RandomSource,
} from '../../hal/index.js'
import {
  type CommandReply,
  type CommandRequest,
  BACKUP_OPS,
  EXT_PAIR_OP,
  EXT_PAIRINGS_OP,
  fail,
  type IdentityState,
  type JournalEntry,
  type KeystoreState,
  LogResult,
  LogType,
  operationAccess,
  type RecordCheck,
  SerialQueue,
  type SystemState,
  VERIFY_RECORDS_OP,
} from '../../protocol/index.js'
import { followReadModels, type OperationSpec, type ReadModelBus, ServiceHost } from '../../bus/index.js'
import { BearerGuard, type JournalPort } from '../host/index.js'
import { BackupFiles } from './backup-files.js'
import { BackupKeyStore } from './backup-key.js'
import { ExpandedKeys } from './crypto-expanded-keys.js'
import { extPair, extPairings } from './ext-pairings.js'
import { keystoreDiagOperations } from './diag-operations.js'
import { keystoreOperations } from './operations.js'
import { KeyLifecycles } from './key-lifecycles.js'
import { KeyRepository } from './key-repository.js'
import { RandomPool } from './random-pool.js'
import { RestoreStage } from './restore-stage.js'
import type { KeystoreContext } from './keystore-context.js'

/**
 * noble's KATs (about 0.3 s of pure-JS curve arithmetic on the main thread) only tell whether the
 * fallback engine is sound: they wait until the other services have started, so that they do not
 * delay the device's readiness.
 */
const FALLBACK_KATS_DELAY_MS = 2_000

const FLS_KAT = 0x01
const FLS_INTEGRITY = 0x08
/** Lines of what did not check that a KEY_INTEGRITY_ERROR record (and the ops log) carries. */
const PROBLEM_LINES = 8

export interface KeystoreActorOptions {
  nc: NatsConnection
  hal: Hal
  journal: JournalPort
  logger: Logger
  /** The engines whose KATs decide which one the device uses; tests inject a faulty one. */
  engines?: { native: CryptoEngine; noble: CryptoEngine }
  /** The DIAG build (hemd --diag): serve the `diag_*` operations (docs/diag.md). */
  diag?: boolean
}

/**
 * The key repository and everything that uses key material: key management, derive and the
 * crypto operations. The only service that unseals keys, so with `--split` the only process holding them.
 * It follows the auth actor's read model: keys serve only a personalised device, and a
 * wipeout (seen as `inited` turning false) destroys them.
 */
export class KeystoreActor implements KeystoreContext {
  readonly host: ServiceHost<KeystoreState>
  readonly random: RandomSource
  readonly guard: BearerGuard
  readonly pqc = postQuantum
  readonly expanded = new ExpandedKeys()
  readonly keys: KeyLifecycles
  private readonly identity: ReadModelBus
  private readonly backupKeys: BackupKeyStore
  private readonly restore: RestoreStage
  private fls = 0
  private settleKats: () => void = () => undefined
  private katFailures: string[] = []
  private followed: boolean | undefined

  private constructor(
    private readonly options: KeystoreActorOptions,
    readonly engine: CryptoEngine,
    readonly repository: KeyRepository,
  ) {
    this.random = new RandomPool((n) => options.hal.entropy.read(n)).take
    this.keys = new KeyLifecycles(options.journal, repository)
    const { hal } = options
    this.backupKeys = new BackupKeyStore(hal.backupKey, hal.enclave.sealer('backup'), hal.devid)
    this.restore = new RestoreStage({ actor: this, clock: () => hal.clock.now(), wipe: () => this.wipeKeys() })
    this.identity = followReadModels(
      options.nc,
      options.hal.devid,
      'keystore',
      ['auth', 'system'],
      options.logger,
      () =>
        void this.followIdentity().catch((err: Error) =>
          options.logger.error({ err: err.message }, 'erasing the key repository failed; the next boot erases it'),
        ),
    )
    this.guard = new BearerGuard({
      identity: () => this.identityState,
      clock: options.hal.clock,
      journal: options.journal,
    })
    this.host = new ServiceHost<KeystoreState>(
      options.nc,
      options.hal.devid,
      'keystore',
      {
        ...keystoreOperations(this),
        // No principal: only the system service may send it (bus/services.ts), for its self-test.
        // Exclusive: a key it finds bad leaves memory, which no derive (that yields) may be using.
        [VERIFY_RECORDS_OP]: { handler: () => this.verifyRecords() },
        // For the auth service alone (bus/services.ts): storing a pairing checks the user's token it forwards.
        [EXT_PAIR_OP]: this.guard.operation(operationAccess.extPair, (req) => extPair(this, req)),
        [EXT_PAIRINGS_OP]: { exclusive: false, handler: (req) => extPairings(this, req) },
        ...this.backupOperations(),
        ...(options.diag ? keystoreDiagOperations(this) : {}),
      },
      options.logger,
    )
  }

  /**
   * The backup passphrase and backups (the master's), and a restore's upload (anyone's, on a fresh device) and its
   * opening (the auth service's alone, bus/services.ts): docs/backup.md.
   */
  private backupOperations(): Record<string, OperationSpec> {
    const { hal, journal } = this.options
    const files = new BackupFiles({
      actor: this,
      keys: this.backupKeys,
      devid: hal.devid,
      logKey: hal.enclave.logSigner.publicKey,
      head: () => journal.head(),
      clock: () => hal.clock.now(),
    })
    const { backup } = operationAccess
    const restore = this.restore
    return {
      // Not exclusive: the KDF takes seconds, and key operations go on meanwhile.
      [BACKUP_OPS.passphrase]: this.guard.operation(backup, (req) => files.setPassphrase(req), false),
      [BACKUP_OPS.create]: this.guard.operation(backup, (req) => files.create(req)),
      [BACKUP_OPS.chunk]: this.guard.operation(backup, (req) => files.chunk(req), false),
      [BACKUP_OPS.uploadBegin]: { handler: (req) => restore.uploadBegin(req) },
      upload_chunk: { handler: (req) => restore.uploadChunk(req) },
      upload_end: { handler: (req) => restore.uploadEnd(req) },
      upload_abort: { handler: (req) => restore.uploadAbort(req) },
      [BACKUP_OPS.open]: { handler: (req) => restore.open(req) },
      [BACKUP_OPS.abort]: { handler: () => restore.abort() },
    }
  }

  /** Runs the KATs, opens and checks the repository, journals what failed, then serves. */
  static async start(o: KeystoreActorOptions): Promise<KeystoreActor> {
    let actor: KeystoreActor | undefined
    const choice = chooseEngine(
      o.engines ?? { native: nativeEngine, noble: nobleEngine },
      (run) =>
        setTimeout(async () => {
          await run()
          if (choice.kats.noble?.ok === false)
            o.logger.warn(
              { failed: choice.kats.noble.failed },
              'the fallback crypto engine (noble) fails its self-tests',
            )
        }, FALLBACK_KATS_DELAY_MS).unref(),
      { onLateFailure: (failed) => actor?.katsFailed(failed, true) },
    )
    const repository = await KeyRepository.open({
      media: o.hal.keySlots,
      sealer: o.hal.enclave.sealer('keys'),
      devid: o.hal.devid,
    })
    actor = new KeystoreActor(o, choice.engine, repository)
    actor.settleKats = choice.settle
    const problems: JournalEntry[] = []
    if (choice.failed.length > 0) actor.katsFailed(choice.failed, false)
    if (!repository.intact) problems.push(actor.integrityFailed(repository.problems))
    if (problems.length > 0) await o.journal.append(problems)
    try {
      await actor.identity.whenReady()
      await actor.followIdentity()
    } catch (err) {
      actor.identity.close()
      throw err
    }
    actor.host.start()
    actor.publish()
    return actor
  }

  async stop(): Promise<void> {
    this.identity.close()
    await this.host.stop()
    this.expanded.retain(() => false)
    // A slot torn by a full disk is put back now if it can be, so that the next boot finds no bad record.
    await this.repository.mend().catch(() => undefined)
  }

  /** After every change of the repository: also where the expanded keys of deleted (or wiped) keys go. */
  publish(): void {
    this.expanded.retain((kid) => this.repository.has(kid))
    this.host.publishState({
      fls: this.fls,
      engine: this.engine.name,
      ...(this.katFailures.length > 0 ? { kat_failed: this.katFailures } : {}),
      repo_stats: this.repository.stats(),
      ...(this.followed !== undefined ? { inited: this.followed } : {}),
    })
  }

  /** The DIAG build: key list entries show where their records sit in the image. */
  get diag(): boolean {
    return this.options.diag === true
  }

  get logger(): Logger {
    return this.options.logger
  }

  now(): number {
    return Math.floor(this.options.hal.clock.now() / 1000)
  }

  get identityState(): IdentityState | undefined {
    return this.identity.readModel<IdentityState>('auth')
  }

  /**
   * The self-test's check of every stored record, on the media as it is now. Damage found since
   * the boot (or the last check) is what a boot would find: fls 0x08, KEY_INTEGRITY_ERROR, and the
   * read model published, which the health machine follows.
   */
  private async verifyRecords(): Promise<CommandReply> {
    const invalidated: string[] = []
    const failed = await this.repository.verifyRecords((kid) => invalidated.push(kid))
    if (failed.length > 0) {
      const entry = this.integrityFailed(failed)
      this.publish()
      await this.options.journal.append([entry])
    }
    for (const kid of invalidated) await this.keys.send(kid, { type: 'INVALIDATED' })
    const check: RecordCheck = {
      intact: this.repository.intact,
      newlyInvalid: failed.length,
      repo_stats: this.repository.selfTestStats(),
    }
    return { status: 200, body: check }
  }

  /** Raises fls 0x08 for records that do not check; the KEY_INTEGRITY_ERROR record to journal. */
  private integrityFailed(problems: readonly string[]): JournalEntry {
    this.fls |= FLS_INTEGRITY
    const lines = problems.slice(0, PROBLEM_LINES)
    this.options.logger.error({ problems: lines }, 'the key repository does not verify')
    return {
      type: LogType.KEY_INTEGRITY_ERROR,
      result: LogResult.ERROR,
      data: { invalid: this.repository.stats().invalid, problems: lines },
    }
  }

  /** The health machine journals it (NON_SECURE_STATE), with the failed KATs from the read model. */
  private katsFailed(failed: string[], late: boolean): void {
    this.fls |= FLS_KAT
    this.katFailures = [...this.katFailures, ...failed]
    this.options.logger.error({ engine: this.engine.name, failed }, 'crypto self-tests failed')
    if (late) this.publish()
  }

  /**
   * Why keys cannot be served now (409, or 503 while the identity is unknown), or undefined when they can.
   * The KATs deferred at boot run first, if they have not yet: no key is used on code that has not passed them.
   */
  unavailable(): CommandReply | undefined {
    this.settleKats()
    const identity = this.identityState
    if (!identity) return fail(503, 'bus_unavailable', 'The device identity is not known yet; try again')
    if (!identity.inited) return fail(409, 'not_personalised', 'The device is not personalised')
    // Its own faults count at once; the health machine's (which include them) once published.
    if (this.fls !== 0 || (this.identity.readModel<SystemState>('system')?.status.fls_state ?? 0) !== 0) {
      return fail(409, 'device_fault', 'The device is in a fail state (see fls_state in status)')
    }
    return undefined
  }

  async journal(entries: JournalEntry[]): Promise<void> {
    await this.options.journal.append(entries)
  }

  /** FAILED_SCOPE_CHECK for a request the gateway should not have let through, or that did not come through it. */
  denied(req: CommandRequest): Promise<CommandReply> {
    return this.guard.denied(req)
  }

  /**
   * A wipeout journaled by the auth actor (or one a crash interrupted) destroys every key. At
   * start a failure stops the boot: a new owner must never find the old owner's keys.
   */
  private readonly wiping = new SerialQueue()
  private followIdentity(): Promise<void> {
    return this.wiping.run(async () => {
      const identity = this.identityState
      if (identity && this.restore.orphaned(identity)) {
        await this.wipeKeys()
        this.options.logger.warn('keys of a restore that was never journaled are erased')
      }
      if (!identity || identity.inited === this.followed) return
      if (!identity.inited) {
        if (this.repository.stats().total > 0) {
          await this.wipeKeys()
          this.options.logger.info('device wiped out: the key repository is erased')
        }
        await this.backupKeys.erase()
      }
      this.followed = identity.inited
      this.publish()
    })
  }

  /** Erases the repository; even when that fails (the next boot erases it), no key stays in memory. */
  private async wipeKeys(): Promise<void> {
    try {
      await this.repository.wipe()
    } finally {
      this.expanded.retain(() => false)
      this.keys.clear()
      this.publish()
    }
  }
}
