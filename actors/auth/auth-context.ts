import type { Logger } from 'pino'
import type { Hal } from '../../hal/index.js'
import type { ConfigEvent, DeviceConfig, personalisationMachine, provisioningMachine } from '../../machines/index.js'
import type { CheckinAction, CommandReply, CommandRequest, JournalEntry } from '../../protocol/index.js'
import type { BearerGuard, MachineRunner } from '../host/index.js'
import type { BearerIssuer } from './bearer.js'
import type { ChallengeBook } from './challenges.js'
import type { DiskFormat } from './disk-format.js'
import type { ApprovalFacts, ExtAuthBook, PairingFacts } from './ext-auth-book.js'
import type { FailedLoginAudit } from './failed-login-audit.js'
import type { LoginQueue } from './login-queue.js'
import type { SessionKey } from './session-key.js'

/** Unix seconds. */
export type Now = () => number

/** What the auth actor's operations (login, personalisation, configuration, attestation, check-in) may use of it. */
export interface AuthContext {
  readonly hal: Hal
  readonly logger: Logger
  readonly now: Now
  readonly session: SessionKey
  readonly challenges: ChallengeBook
  readonly nonces: ChallengeBook
  readonly tokens: BearerIssuer
  /** Login attempts, one at a time behind the brake, shared out between clients. */
  readonly logins: LoginQueue
  readonly failedLogins: FailedLoginAudit
  /** The pairing challenges of `ext/init` and the approval challenges of `ext/request` (ext-auth contract §1). */
  readonly extPairings: ExtAuthBook<PairingFacts>
  readonly extApprovals: ExtAuthBook<ApprovalFacts>
  /** Refused `ext/token` exchanges: AUTH_SUCCESS_EXTERNAL FAILED, counted as refused logins are. */
  readonly failedExtLogins: FailedLoginAudit
  readonly guard: BearerGuard
  readonly personalisation: MachineRunner<typeof personalisationMachine>
  readonly provisioning: MachineRunner<typeof provisioningMachine>
  /** False when the journal did not verify at boot. */
  readonly intact: boolean
  /** No owner (see AuthActor.fresh). */
  readonly fresh: boolean
  /** The DIAG build (hemd --diag): `diag_wipe_config` is served. */
  readonly diag: boolean
  config: DeviceConfig
  /** What status shows of the disks' format (P): `status<N>` while one runs, then `done` or `failed`. */
  format: string | undefined
  /** The format of the disks (P) that personalisation's `formatting` waits for. */
  readonly diskFormat: DiskFormat
  /** Set by a wipeout: this incarnation takes no new owner (a reboot follows). */
  wipedOut: boolean
  publish(): void
  applyConfig(event: ConfigEvent): void
  journal(entries: JournalEntry[]): Promise<void>
  /** The role a stored key logs in as. */
  roleOf(publicKey: Uint8Array): 'U' | 'M' | undefined
  denied(req: CommandRequest): Promise<CommandReply>
  /** A command to the key store: of its operations, the auth service may send only the pairings' and the backups'. */
  keystore(op: string, req: CommandRequest, deadlineMs?: number): Promise<CommandReply>
  /** Resolves once the keystore and the disks followed a wipeout, or after `timeoutMs`. */
  wipeoutFollowed(timeoutMs: number): Promise<void>
  /** Asks the supervisor to restart the device's services. */
  reboot(): Promise<void>
  /** Passes a trusted backend's verified order to the health machine. */
  checkinOrder(action: CheckinAction, rid: string): Promise<void>
}
