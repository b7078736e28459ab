import type { NatsConnection } from '@nats-io/transport-node'
import { timingSafeEqual } from 'node:crypto'
import type { Logger } from 'pino'
import type { JournalHistory } from '../../eventstore/index.js'
import {
  type CheckinAction,
  type CommandReply,
  type CommandRequest,
  DEADLINE_MS,
  type IdentityState,
  type JournalEntry,
  type KeystoreState,
  LogResult,
  LogType,
  AUTHREQ_LIFETIME,
  PAIRING_REQUEST_LIFETIME,
  type StorageState,
  Subjects,
} from '../../protocol/index.js'
import type { Hal } from '../../hal/index.js'
import {
  type ConfigEvent,
  type DeviceConfig,
  foldIdentity,
  machineRegistry,
  type personalisationMachine,
  type provisioningMachine,
  reduceConfig,
  versioned,
} from '../../machines/index.js'
import { callService, followReadModels, type OperationSpec, type ReadModelBus, ServiceHost } from '../../bus/index.js'
import { BearerGuard, type JournalPort, MachineRunner, scopeCheckEntry } from '../host/index.js'
import { BearerIssuer } from './bearer.js'
import { ChallengeBook } from './challenges.js'
import { DiskFormat, formatRecord } from './disk-format.js'
import { type ApprovalFacts, ExtAuthBook, type PairingFacts } from './ext-auth-book.js'
import { FailedLoginAudit } from './failed-login-audit.js'
import { notingJournalTampers } from './journal-tampers.js'
import { LoginQueue } from './login-queue.js'
import { eraseOwnerMaterial } from './owner-erasure.js'
import { SessionKey } from './session-key.js'
import type { AuthContext, Now } from './auth-context.js'

export interface AuthActorOptions {
  nc: NatsConnection
  hal: Hal
  journal: JournalPort
  /** The journal as it stood at boot: identity, personalisation and configuration are folded from it. */
  history: JournalHistory
  /** False when the journal's check at this boot found a tamper (the eventstore's status); default true. */
  bootIntact?: boolean
  logger: Logger
  /** Asks the supervisor to restart the device's services (after a wipeout). */
  reboot(): Promise<void>
  /** Passes a trusted backend's verified lock or shutdown order to the health machine. */
  checkinOrder(action: CheckinAction, rid: string): Promise<void>
  /** The DIAG build (hemd --diag): serve the `diag_*` operations (docs/diag.md). */
  diag?: boolean
}

/**
 * Identity and access: personalisation, login, bearer tokens, configuration, attestation and
 * provisioning. It alone holds the per-boot session key and token signing key, so every token
 * dies with it; configuration and machine states are rebuilt from the journal at each start.
 * Its own operations for a principal check the bearer token as every other service does.
 */
export class AuthActor implements AuthContext {
  readonly host: ServiceHost<IdentityState>
  readonly session: SessionKey
  readonly challenges: ChallengeBook
  readonly nonces: ChallengeBook
  readonly tokens: BearerIssuer
  readonly guard: BearerGuard
  readonly logins: LoginQueue
  readonly failedLogins: FailedLoginAudit
  readonly extPairings: ExtAuthBook<PairingFacts>
  readonly extApprovals: ExtAuthBook<ApprovalFacts>
  readonly failedExtLogins: FailedLoginAudit
  readonly personalisation: MachineRunner<typeof personalisationMachine>
  readonly provisioning: MachineRunner<typeof provisioningMachine>
  readonly now: Now
  config: DeviceConfig
  format: string | undefined
  readonly diskFormat: DiskFormat = new DiskFormat(this)
  /** Set by a wipeout: this incarnation takes no new owner (a reboot follows). */
  wipedOut = false
  /** False when the journal did not verify at boot: part of the history, perhaps of the owner's, is lost. */
  readonly intact: boolean
  /** What the boot must finish before serving, as the journal tells it (see IdentityFacts). */
  private readonly unfinished: { lastFormat: string | undefined; erasure: boolean }
  /** The keystore's and the storage service's read models: a wipeout reboots once both have followed it. */
  private readonly followers: ReadModelBus
  private readonly followerWatches = new Set<() => void>()
  private anyOriginWarned = false

  /** The options but the boot's history: its files' bytes (14 MB at 100 000 records) are not kept once folded. */
  private readonly options: Omit<AuthActorOptions, 'history'>

  constructor({ history, ...o }: AuthActorOptions, operations: (actor: AuthContext) => Record<string, OperationSpec>) {
    this.options = o
    const random = (n: number) => o.hal.entropy.read(n)
    this.now = () => Math.floor(o.hal.clock.now() / 1000)
    this.session = new SessionKey(random)
    // Login and personalisation challenges, to anyone who asks: 64 per client, so that a flood recycles its own.
    this.challenges = new ChallengeBook({ random, capacity: 4096, perSource: 64 })
    this.nonces = new ChallengeBook({ random })
    this.tokens = new BearerIssuer({ random })
    this.logins = new LoginQueue({ clock: o.hal.clock })
    this.failedLogins = new FailedLoginAudit({
      journal: (entries) => this.journal(entries),
      logger: o.logger,
      clock: o.hal.clock,
    })
    this.failedExtLogins = new FailedLoginAudit({
      journal: (entries) => this.journal(entries),
      logger: o.logger,
      clock: o.hal.clock,
      type: LogType.AUTH_SUCCESS_EXTERNAL,
    })
    // Per boot, like the login challenges: a reboot or a wipeout (which reboots) ends them all.
    this.extPairings = new ExtAuthBook('pairing', { random, lifetime: PAIRING_REQUEST_LIFETIME })
    this.extApprovals = new ExtAuthBook('approval', { random, lifetime: AUTHREQ_LIFETIME })
    this.guard = new BearerGuard({ identity: () => this.host.state, clock: o.hal.clock, journal: o.journal })
    const seen = { tamper: o.bootIntact === false }
    const facts = foldIdentity(notingJournalTampers(history.records, seen), o.hal.variant)
    // A journal deleted whole reads as a new device's while the enclave kept the owner's keys: their
    // history is as lost as in files that do not verify, and the device must not take a new owner.
    const lost = seen.tamper && facts.personalisation.matches('fresh') && o.hal.enclave.credentials() !== undefined
    this.intact = history.intact && !lost
    this.config = facts.config
    this.unfinished = { lastFormat: facts.lastFormat, erasure: facts.erasurePending }
    this.personalisation = new MachineRunner(
      versioned(machineRegistry.personalisation),
      o.journal,
      facts.personalisation,
    )
    this.provisioning = new MachineRunner(versioned(machineRegistry.provisioning), o.journal, facts.provisioning)
    this.host = new ServiceHost<IdentityState>(o.nc, o.hal.devid, 'auth', operations(this), o.logger)
    this.followers = followReadModels(o.nc, o.hal.devid, 'auth', ['keystore', 'storage'], o.logger, () =>
      this.followerWatches.forEach((watch) => watch()),
    )
  }

  get hal(): Hal {
    return this.options.hal
  }

  get logger(): Logger {
    return this.options.logger
  }

  get diag(): boolean {
    return this.options.diag === true
  }

  reboot(): Promise<void> {
    return this.options.reboot()
  }

  checkinOrder(action: CheckinAction, rid: string): Promise<void> {
    return this.options.checkinOrder(action, rid)
  }

  /**
   * No owner. A history that does not verify may have lost the records of a personalisation,
   * so then the owner's keys in the enclave count too: a broken journal must never make a
   * device look new, or its keys and disks would be wiped and a stranger let in.
   */
  get fresh(): boolean {
    return (
      this.personalisation.matches('fresh') && (this.intact || this.options.hal.enclave.credentials() === undefined)
    )
  }

  /**
   * Serves, once the boot has finished what the journal says a power cut, a stop or a failure left
   * undone: a wipeout's erasure first (a failure stops the boot: nothing of the former owner may be
   * served), then a format of the disks, which starts again from its beginning.
   */
  async start(): Promise<void> {
    // Due only while the device is fresh (a personalisation ends it); and a history that does not verify may have
    // lost the owner: never erase on its word.
    if (this.unfinished.erasure && this.intact) {
      this.logger.warn("a wipeout's erasure did not finish: erasing the former owner's material before serving")
      await eraseOwnerMaterial(this, 'boot')
    } else if (this.intact && this.personalisation.matches('fresh') && this.hal.enclave.credentials() !== undefined) {
      // Login keys of a personalisation or a restore the journal never took (the process died between storing them
      // and the append): no owner has them. A fresh device lets nobody in with them; they go before it serves.
      this.logger.warn('login keys without a journaled owner: erased')
      await this.hal.enclave.wipe()
    }
    this.host.start()
    if (this.personalisation.matches('formatting')) {
      // The last run of this format started (or was decided) and never ended: the power went meanwhile.
      const cut = this.unfinished.lastFormat === undefined || this.unfinished.lastFormat === 'start'
      this.diskFormat.start('boot', cut ? [formatRecord(LogResult.FAILED, { phase: 'interrupted' })] : [])
    }
    this.publish()
  }

  /** A format under way is cancelled, and journaled as such, before the journal goes. */
  async stop(): Promise<void> {
    this.followers.close()
    this.logins.close()
    await this.host.stop()
    await this.diskFormat.cancel('stop')
    await this.failedLogins.flush()
    await this.failedExtLogins.flush()
  }

  /**
   * Resolves once the keystore and the disks show they have followed the wipeout, so that
   * their records land in this boot; after `timeoutMs` regardless: they finish at the next boot.
   */
  wipeoutFollowed(timeoutMs: number): Promise<void> {
    const erased = () =>
      this.followers.readModel<KeystoreState>('keystore')?.inited === false &&
      this.followers.readModel<StorageState>('storage')?.inited === false
    return new Promise((resolve) => {
      const done = () => {
        timer.cancel()
        this.followerWatches.delete(watch)
        resolve()
      }
      const watch = () => void (erased() && done())
      const timer = this.options.hal.clock.timer(timeoutMs, done)
      this.followerWatches.add(watch)
      watch()
    })
  }

  publish(): void {
    const { config } = this
    this.warnAnyOrigin(config.origin)
    this.host.publishState({
      token_key: this.tokens.publicKey,
      inited: !this.fresh,
      ...(this.format !== undefined ? { format: this.format } : {}),
      ctx: config.ctx,
      trusted_ts: config.trusted_ts,
      allow_keysearch: config.allow_keysearch,
      ...(this.options.hal.variant === 'P' ? { storage_mode: config.storage_mode } : {}),
      transport: {
        hostname: config.hostname,
        origin: config.origin,
        hsts: config.http_option_hsts,
        dosprot: config.http_option_dosprot_mode,
      },
      intact: this.intact,
    })
  }

  /** `*` is only ever the owner's choice: the ops log says what it exposes at boot and whenever it is set. */
  private warnAnyOrigin(origin: string): void {
    const any = origin === '*'
    if (any && !this.anyOriginWarned)
      this.logger.warn(
        { origin },
        'CORS origin *: every web page the owner visits may call the routes that need no token',
      )
    this.anyOriginWarned = any
  }

  applyConfig(event: ConfigEvent): void {
    this.config = reduceConfig(this.config, event, this.options.hal.variant)
  }

  async journal(entries: JournalEntry[]): Promise<void> {
    await this.options.journal.append(entries)
  }

  /** The role a stored key logs in as, compared in constant time against both. */
  roleOf(publicKey: Uint8Array): 'U' | 'M' | undefined {
    const stored = this.options.hal.enclave.credentials()
    if (!stored) return undefined
    const user = publicKey.length === stored.user.length && timingSafeEqual(publicKey, stored.user)
    const master = publicKey.length === stored.master.length && timingSafeEqual(publicKey, stored.master)
    return user ? 'U' : master ? 'M' : undefined
  }

  keystore(op: string, req: CommandRequest, deadlineMs = DEADLINE_MS.short): Promise<CommandReply> {
    const { nc, hal } = this.options
    const subject = new Subjects(hal.devid).command('keystore', op)
    return callService(nc, subject, req, deadlineMs, `the key store did not answer ${op}`)
  }

  /**
   * The gateway's refusal of a scope or role: FAILED_SCOPE_CHECK, result FAILED, source 403, with the token's scope.
   */
  async denied(req: CommandRequest): Promise<CommandReply> {
    const route = req.body as { method?: unknown; path?: unknown } | undefined
    await this.journal([scopeCheckEntry(req, { route: `${String(route?.method)} ${String(route?.path)}` })])
    return { status: 200 }
  }
}
