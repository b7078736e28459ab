// The whole device API for a program: typed calls, typed errors, and logins it makes itself. The
// calls live by area (system-, key-, crypto- and device-calls.ts, as hemctl's commands do); this
// class is their one face.
import * as backup from './backup-calls.js'
import * as transfer from './backup-transfer.js'
import * as crypto from './crypto-calls.js'
import * as device from './device-calls.js'
import { DeviceSession } from './device-session.js'
import * as ext from './ext-auth-calls.js'
import * as keys from './key-calls.js'
import * as system from './system-calls.js'
import type * as T from './types.js'

export type { HemClientOptions } from './device-session.js'

/**
 * A client of one device: a method per route (`call`, `json` and `authorized` reach any), each
 * logging in for the scope it needs (DeviceSession).
 */
export class HemClient extends DeviceSession {
  // ---- system ----

  status(): Promise<T.Status> {
    return system.status(this)
  }

  version(): Promise<T.Version> {
    return system.version(this)
  }

  openapi(): Promise<Record<string, unknown>> {
    return system.openapi(this)
  }

  /** The Prometheus text exposition of `GET /metrics` (a `system:metrics` token, U or M). */
  metrics(): Promise<string> {
    return system.metrics(this)
  }

  config(): Promise<T.Config> {
    return system.config(this)
  }

  /** Changes configuration fields; `reboot_required` says whether they apply only after a reboot. */
  setConfig(changes: Record<string, unknown>): Promise<T.ConfigUpdated> {
    return system.setConfig(this, changes)
  }

  /** Factory reset: keys, disks and configuration are erased, the device reboots fresh. */
  wipeout(): Promise<T.ConfigUpdated> {
    return system.setConfig(this, { wipeout: true })
  }

  attestation(): Promise<T.Attestation> {
    return system.attestation(this)
  }

  /** As the owner, once personalised (attestation needs any valid token then). */
  ownedAttestation(): Promise<T.Attestation> {
    return system.ownedAttestation(this)
  }

  provision(body: Record<string, unknown>): Promise<void> {
    return system.provision(this, body)
  }

  /** The device's signed check-in (`{check}`), for its fleet backend to answer. */
  checkin(): Promise<T.Checkin> {
    return system.checkin(this)
  }

  /** Hands the device its backend's signed reply to a check-in: `OK`, or `LOCKED`/`SHUTDOWN` when it acts on it. */
  checkinReply(checked: string): Promise<T.CheckinResult> {
    return system.checkinReply(this, checked)
  }

  /** Runs every self-test; a failure shows in `fls_state`. Fresh devices need no token. */
  selftest(): Promise<T.Selftest> {
    return system.selftest(this)
  }

  reboot(): Promise<void> {
    return system.reboot(this)
  }

  shutdown(): Promise<void> {
    return system.shutdown(this)
  }

  // ---- backup and restore (docs/backup.md) ----

  /** Sets or replaces the backup passphrase: a master login (role M, scope system:backup). */
  setBackupPassphrase(passphrase: string): Promise<void> {
    return backup.setBackupPassphrase(this, passphrase)
  }

  /** A backup file of the whole key store and configuration, and the name the device suggests for it (role M). */
  createBackup(o: { onProgress?: transfer.Received } = {}): Promise<transfer.Backup> {
    return transfer.createBackup(this, o)
  }

  /** Stages a backup file on a fresh device (no login): `restore` opens it. */
  stageRestore(
    file: Uint8Array,
    o: { onProgress?: (sent: number, total: number) => void } = {},
  ): Promise<{ size: number; sha256: string }> {
    return transfer.stageRestore(this, file, o)
  }

  /** Restores the staged file under its backup passphrase: the device becomes the source's owner's (no login). */
  restore(passphrase: string): Promise<backup.Restored> {
    return backup.restore(this, passphrase)
  }

  // ---- keys ----

  /** Any of the 23 types; `mode` matters only for the SECP curves. */
  createKey(input: T.KeySpec): Promise<{ kid: string }> {
    return keys.createKey(this, input)
  }

  /** A public key of any asymmetric type: raw, SEC1 (compressed or not) for the SECP curves. */
  importKey(input: T.KeySpec & { pubkey: Uint8Array }): Promise<{ kid: string }> {
    return keys.importKey(this, input)
  }

  /**
   * A new key made in the device from an ECDH of `kid` with the peer (scope `keymgmt:derive`);
   * the same derive twice makes the same key, which the device refuses (406) while it exists.
   */
  deriveKey(input: T.DeriveInput): Promise<{ kid: string }> {
    return keys.deriveKey(this, input)
  }

  /** One page (at most 15 keys) from `offset`. */
  listKeys(offset = 0, count = 15): Promise<T.KeyList> {
    return keys.listKeys(this, offset, count)
  }

  /** Every key, page after page. */
  allKeys(): Promise<T.KeyEntry[]> {
    return keys.allKeys(this)
  }

  /** With `use`, asked with the key's own scope `keymgmt:use:<kid>` (a program that holds only that one). */
  getKey(kid: string, o: { use?: boolean } = {}): Promise<T.KeyDetails> {
    return keys.getKey(this, kid, o)
  }

  deleteKey(kid: string): Promise<void> {
    return keys.deleteKey(this, kid)
  }

  /** Sets the label and the description: without `descr` the key's description is cleared (crypto-contract §2). */
  updateKey(kid: string, label: string, descr?: Uint8Array): Promise<void> {
    return keys.updateKey(this, kid, label, descr)
  }

  /** Keys whose `descr` bytes match: `^` + base64 for a prefix, base64 + `$` for a suffix, else a substring. */
  searchKeys(descr: string, offset?: number, limit?: number): Promise<T.KeyList> {
    return keys.searchKeys(this, descr, offset, limit)
  }

  // ---- crypto (scope keymgmt:use:<kid>) ----

  encrypt(input: T.EncryptInput): Promise<T.Encrypted> {
    return crypto.encrypt(this, input)
  }

  decrypt(input: T.DecryptInput): Promise<Uint8Array> {
    return crypto.decrypt(this, input)
  }

  /** ECDSA (DER) or EdDSA (raw) signature of `msg`. */
  sign(input: T.SignInput): Promise<Uint8Array> {
    return crypto.sign(this, input)
  }

  /** Whether the signature verifies (a device's 406 is false; named so beside the upgrade check's `verify`). */
  verifySignature(input: T.VerifyInput): Promise<boolean> {
    return crypto.verifySignature(this, input)
  }

  hmac(input: T.HmacInput): Promise<Uint8Array> {
    return crypto.hmac(this, input)
  }

  /** Whether `mac` is the message's (compared in the device, in constant time). */
  hmacVerify(input: T.HmacVerifyInput): Promise<boolean> {
    return crypto.hmacVerify(this, input)
  }

  /** The shared secret with the peer: its first 32 bytes, or with `alg` that digest of all of it. */
  ecdh(input: T.EcdhInput): Promise<Uint8Array> {
    return crypto.ecdh(this, input)
  }

  /** RFC 3394 key wrap: 8 bytes longer than `msg`. */
  wrap(input: T.WrapInput): Promise<Uint8Array> {
    return crypto.wrap(this, input)
  }

  /** The wrapped key, once its integrity check passes (else NotAcceptableError). */
  unwrap(input: T.WrapInput): Promise<Uint8Array> {
    return crypto.unwrap(this, input)
  }

  /** A fresh shared secret and its ciphertext for the holder of an ML-KEM key (or of its private part). */
  mlKemEncapsulate(kid: string): Promise<T.Encapsulated> {
    return crypto.mlKemEncapsulate(this, kid)
  }

  mlKemDecapsulate(kid: string, ciphertext: Uint8Array): Promise<T.Decapsulated> {
    return crypto.mlKemDecapsulate(this, kid, ciphertext)
  }

  mlDsaSign(input: T.MlDsaSignInput): Promise<T.MlDsaSigned> {
    return crypto.mlDsaSign(this, input)
  }

  mlDsaVerify(input: T.MlDsaVerifyInput): Promise<boolean> {
    return crypto.mlDsaVerify(this, input)
  }

  // ---- external authenticators (ext-auth-contract §1) ----

  /** The device's eid and what a pairing's QR code shows of its owner (scope auth:ext:pair). */
  pairingIdentity(): Promise<ext.PairingIdentity> {
    return ext.pairingIdentity(this)
  }

  /** A pairing request for the broker's eid-bound key `epk` (scope auth:ext:pair, a U token). */
  extInit(epk: string): Promise<ext.ExtInit> {
    return ext.extInit(this, epk)
  }

  /** Stores the authenticator of a phone's `reply`; the answer goes to the broker's finalise verbatim. */
  extValidate(pid: string, reply: string): Promise<ext.ExtValidated> {
    return ext.extValidate(this, pid, reply)
  }

  /** The device's proof for the broker's `subscribers/*`, for its eid-bound key `epk`. */
  extMac(epk: string): Promise<ext.ExtMac> {
    return ext.extMac(this, epk)
  }

  /** An approval challenge for the paired authenticators (no token needed). */
  extRequest(input: ext.ExtRequestInput): Promise<ext.ExtRequested> {
    return ext.extRequest(this, input)
  }

  /** An authenticator's approval, exchanged for a bearer token (no token needed). */
  extToken(authreply: string): Promise<{ token: string }> {
    return ext.extToken(this, authreply)
  }

  /** The paired authenticators: keys whose descr is "EXTAID" ‖ pid (scope keymgmt:search). */
  extPairings(): Promise<ext.Pairing[]> {
    return ext.pairings(this)
  }

  // ---- disks (P) ----

  unlockDisk(disk: 0 | 1, mode: 'ro' | 'rw' = 'ro'): Promise<void> {
    return device.unlockDisk(this, disk, mode)
  }

  lockDisk(disk: 0 | 1): Promise<void> {
    return device.lockDisk(this, disk)
  }

  // ---- the audit log ----

  logKey(): Promise<T.LogKey> {
    return device.logKey(this)
  }

  /** Every log file id, oldest first. An E device keeps none it serves: NotFoundError. */
  logFiles(): Promise<string[]> {
    return device.logFiles(this)
  }

  /** A log file, byte for byte as the device stores it. */
  logFile(id: string): Promise<Buffer> {
    return device.logFile(this, id)
  }

  // ---- upgrades ----

  /** Stages an image (fw on P and E, ui on P); nothing is checked or installed yet. */
  upload(kind: T.UpgradeKind, image: Uint8Array, onProgress?: (sent: number, total: number) => void): Promise<void> {
    return device.upload(this, kind, image, onProgress)
  }

  /**
   * One look at the check: started (201), running (202) or
   * verified (200); a rejected image throws NotAcceptableError.
   */
  check(kind: T.UpgradeKind): Promise<T.CheckState> {
    return device.check(this, kind)
  }

  /** Starts the check and polls it until the image is verified (or throws why it is not). */
  verify(kind: T.UpgradeKind, o: { intervalMs?: number; onPoll?(state: T.CheckState): void } = {}): Promise<void> {
    return device.verify(this, kind, o)
  }

  /**
   * Installs the verified image: the app at once; firmware reboots the device into it. An older
   * firmware version at the current anti-rollback level needs `allowDowngrade` (the owner's confirmation).
   */
  install(kind: T.UpgradeKind, o: { allowDowngrade?: boolean } = {}): Promise<void> {
    return device.install(this, kind, o)
  }
}
