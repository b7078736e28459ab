import { AUTH_BACKUP_OPS, EXT_PAIR_OP, EXT_PAIRINGS_OP, SYSTEM_DIAG_OPS, VERIFY_RECORDS_OP } from '../protocol/index.js'

/** The key store's pairing operations: the auth service's alone (ext-auth contract §1.2). */
const PAIRING_OPS = [EXT_PAIR_OP, EXT_PAIRINGS_OP].map((op) => `keystore.${op}`)
/** A backup's and a restore's steps that carry the owner's configuration and login keys: the auth service's alone. */
const BACKUP_STEPS = AUTH_BACKUP_OPS.map((op) => `keystore.${op}`)

/**
 * Who is on the bus and what each may do. The nats-server permissions are generated from this
 * table, so a service can only answer its own commands, send the commands it needs and read
 * the events it listens to.
 */
export interface ServiceSpec {
  readonly name: string
  /** Answers `cmd.<name>.>` and publishes `evt.<name>.>`. */
  readonly serves: boolean
  /** Services whose commands it may send; `service.op` allows that one operation only. */
  readonly calls: readonly string[]
  /** Operations (`service.op`) of a service in `calls` that it may not send all the same. */
  readonly denies?: readonly string[]
  /** Services whose events it may read (`*` = all). */
  readonly listens: readonly string[]
  /**
   * Further subjects it may publish to, outside the device's own namespace; `{devid}` stands for the device's id,
   * `{stream-id}` for the id of the generation of its journal's stream it mirrors to (stream-names.ts).
   */
  readonly publishes?: readonly string[]
  /** The NATS account it lives in, when not the device's own (the global account): nothing crosses between accounts. */
  readonly account?: string
}

/** The account of the fleet backend's leaf-node link and of the mirror, apart from the device's services. */
export const FLEET_ACCOUNT = 'FLEET'

export const services: readonly ServiceSpec[] = [
  { name: 'eventstore', serves: true, calls: [], listens: [] },
  // Restarts and stops the services on request (reboot, shutdown, wipeout).
  // Confirms a trial boot of new firmware with the upgrade service once the device is up.
  // Follows the eventstore's read model and the identity's: the journal mirror's state and the CORS origin,
  // for hemd's banner.
  { name: 'supervisor', serves: true, calls: ['upgrade'], listens: ['eventstore', 'auth'] },
  // Owns fls_state: follows the faults every service reports and the keystore's and auth's read models.
  // Every service that acts for a principal follows auth's read model: its token key checks the bearer tokens.
  // Asks the keystore to check every stored record for a self-test.
  {
    name: 'system',
    serves: true,
    calls: ['eventstore', 'supervisor', `keystore.${VERIFY_RECORDS_OP}`],
    listens: ['*'],
  },
  // Passes a trusted backend's check-in orders (lock, shut down) to the health machine.
  // Reboots after a wipeout once the keystore and the disks have followed it.
  // Stores and reads the external authenticators' pairings, which are keys (the key store checks the user's token).
  {
    name: 'auth',
    serves: true,
    calls: ['eventstore', 'supervisor', 'system.checkin', ...PAIRING_OPS, ...BACKUP_STEPS],
    listens: ['keystore', 'storage'],
  },
  // Follows the identity: keys serve a personalised device only, and a wipeout erases them;
  // and the fail state: no key is used while it is not 0.
  { name: 'keystore', serves: true, calls: ['eventstore'], listens: ['auth', 'system'] },
  // The disks (P): follows the identity for format, power-up mode and wipeout, and the fail state.
  { name: 'storage', serves: true, calls: ['eventstore'], listens: ['auth', 'system'] },
  // Serves the audit log files: reads the journal media, appends only its own audit entries.
  { name: 'logger', serves: true, calls: ['eventstore'], listens: ['auth'] },
  // Firmware and app upgrades: stages, checks and installs images; orders the upgrade reboot;
  // reads the system's fail state before it confirms a trial boot (following it asks only `system.state`):
  // none of the system's commands, above all not a check-in order, which only auth may give.
  { name: 'upgrade', serves: true, calls: ['eventstore', 'supervisor'], listens: ['system', 'auth'] },
  // The gateway reaches only the services behind routes: never the journal or the supervisor, of the
  // system's operations only those behind routes (not a check-in order, not the simulator's), and of
  // the upgrade's not the supervisor's confirmation of a trial boot.
  // It reads the state events its projections render (gateway/device-view.ts), no others.
  {
    name: 'gateway',
    serves: false,
    // The DIAG operations answer only on a device started with --diag (no handler otherwise).
    calls: ['system.selftest', 'system.reboot', 'system.shutdown', 'auth', 'keystore', 'logger', 'storage'].concat(
      SYSTEM_DIAG_OPS.map((op) => `system.${op}`),
      ['upload_begin_fw', 'upload_begin_ui', 'upload_chunk', 'upload_end', 'upload_abort'].map((op) => `upgrade.${op}`),
      ['check_fw', 'install_fw', 'check_ui', 'install_ui'].map((op) => `upgrade.${op}`),
    ),
    listens: ['system', 'auth', 'keystore', 'storage', 'upgrade'],
    // The self-test's check of every key record is the system's to ask for, not the network's; the pairings are the
    // auth service's, which checks the pairing's signature first.
    denies: [`keystore.${VERIFY_RECORDS_OP}`, ...PAIRING_OPS, ...BACKUP_STEPS],
  },
  // `hemd sim`, the simulator's fault injection: the one operation, on a sim HAL only.
  { name: 'simctl', serves: false, calls: ['system.sim'], listens: [] },
  // Mirrors the journal to the fleet backend (actors/mirror/): alone in the account the backend's
  // leaf-node link is bound to, so that the backend reaches nothing of the device; it publishes its
  // stream's records and asks the backend's JetStream (any domain) about that one stream only.
  {
    name: 'mirror',
    serves: false,
    calls: [],
    listens: [],
    account: FLEET_ACCOUNT,
    publishes: [
      'hem.fleet.{stream-id}.journal',
      ...['INFO', 'CREATE', 'MSG.GET'].map((api) => `$JS.*.API.STREAM.${api}.HEM_JOURNAL_{stream-id}`),
    ],
  },
]

/** Each connection's private reply inbox, so no service can read another's replies. */
export function inboxPrefix(service: string): string {
  return `_INBOX_${service}`
}
