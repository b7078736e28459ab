// The hardware abstraction: everything hemd needs from the device, and nothing else.
// Only hal/ knows where and how these live (sim: files under the data dir).

export type Variant = 'P' | 'E'

export interface Clock {
  /** Wall-clock time in milliseconds since the Unix epoch. */
  now(): number
  /** Monotonic milliseconds, for uptime and timers; never goes back. */
  monotonic(): number
  /** False while the RTC has never been set (status then omits `ts`/`time`). */
  isSet(): boolean
  /**
   * Resolves once `ms` of this clock's monotonic time have passed: the device's deliberate delays
   * (the login brake) wait on it, so that a test's clock can let them pass without the wall clock.
   */
  sleep(ms: number): Promise<void>
  /**
   * Calls `fire` once `ms` of this clock's time have passed (every `ms`, with `repeat`), until cancelled: the
   * device's deadlines and periodic tasks run on it, so that a test's clock can fire them without waiting.
   */
  timer(ms: number, fire: () => void, options?: TimerOptions): Timer
}

export interface TimerOptions {
  /** Fire every `ms` until cancelled, not once. */
  repeat?: boolean
  /** The timer alone does not keep the process up (Node's `unref`): a stopping process does not wait for it. */
  unref?: boolean
}

export interface Timer {
  /** Stops it: it does not fire after this. Does nothing once it fired (without `repeat`) or was cancelled. */
  cancel(): void
}

export interface EntropySource {
  /** `n` bytes from the device's random source. Throws EntropyError when it cannot deliver. */
  read(n: number): Uint8Array
}

/** Which test found the entropy source unfit: SP 800-90B §4.4's two, or the source itself failing to deliver. */
export interface EntropyFailure {
  test: 'repetition_count' | 'adaptive_proportion' | 'source'
}

/**
 * The noise source itself, below the health tests, as the DIAG build reaches it (crypto-contract §6): its bytes
 * are never handed to anything else once read from here.
 */
export interface RawEntropySource extends EntropySource {
  /** True from `forceFailure` until the next power-up (`TestedEntropySource.startup`). */
  readonly forcedFailure: boolean
  /** The last byte the source delivered (to the health tests or to a raw read), or undefined before any. */
  readonly lastByte: number | undefined
  /** From now until the next power-up every byte it delivers is the same: the health tests must catch it. */
  forceFailure(): void
}

/** The device's entropy source behind its continuous health tests (SP 800-90B §4.4). */
export interface TestedEntropySource extends EntropySource {
  /** Why a health test failed since the last start-up test, or undefined while they pass. */
  readonly failure: EntropyFailure | undefined
  /** When the health tests last ran over fresh samples (ms since the Unix epoch), or undefined before. */
  readonly lastTestedAt: number | undefined
  /** The source below the tests, for the DIAG build's fault and raw dump only. */
  readonly raw: RawEntropySource
  /** The start-up tests of a boot (a power-up): clears a latched or forced failure and tests 1024 fresh samples. */
  startup(): EntropyFailure | undefined
}

export interface TemperatureSensor {
  /** Chip temperature in whole degrees Celsius. */
  readCelsius(): number
}

/** Ed25519 signing inside the enclave: the private key never leaves it. */
export interface EnclaveSigner {
  readonly publicKey: Uint8Array
  sign(message: Uint8Array): Uint8Array
}

export interface TlsCredentials {
  /** Paths that a TLS server can load (uWebSockets.js wants files). */
  certFile: string
  keyFile: string
  /** The certificate in DER, for fingerprints and attestation. */
  certDer: Uint8Array
}

/** The X25519 public keys that log in (`sub` U and M), written by personalisation. */
export interface LoginCredentials {
  user: Uint8Array
  master: Uint8Array
  /**
   * The eid (base64) the passphrases' keys were derived under, where it is not this device's own: a device restored
   * from a backup keeps its owner's keys, derived with the source device's eid (docs/backup.md).
   */
  salt?: string
}

/** What an unprovisioned enclave shows the factory (format: hal/x509/genuine-statement.ts). */
export interface AttestationRequest {
  /** DER PKCS#10 for the attestation key, subject CN = genuineId. */
  csr: Uint8Array
  /** The device's self-statement, signed by the attestation key. */
  genuine: Uint8Array
}

/** What the factory gave back: stored once, served by GET attestation ever after. */
export interface ProvisioningRecord {
  /** DER X.509 certificate of the attestation key, issued by the factory root. */
  crt: Uint8Array
  /** The factory's statement, signed by the factory root key. */
  genuine: Uint8Array
}

/** A TLS certificate chain (leaf first) and, unless it certifies the device's own key, its private key. */
export interface TlsMaterial {
  certChainDer: Uint8Array[]
  keyPkcs8?: Uint8Array
}

export type TlsProblemCode = 'bad_certificate' | 'bad_chain' | 'unsupported_key' | 'key_mismatch'

/** Why the device will not serve some TLS material. */
export interface TlsProblem {
  code: TlsProblemCode
  message: string
}

/**
 * Where the journal last ended with a seal: the file, the seal's seq and the chain head after its
 * line. Kept outside the journal's files so that a journal cut short at its end, or an anchor put
 * back from an older state, shows against it.
 */
export interface JournalAnchor {
  file: string
  seq: number
  head: Uint8Array
  /**
   * Set while the seal may not be durable yet (the anchor moves before the seal is written): its
   * batch follows the record `after.seq` of the same file, whose chain head is `after.head`.
   */
  after?: { seq: number; head: Uint8Array }
}

export interface Enclave {
  /** Signs audit journal files and seals; its public key is `eid_sign` and `/api/logger/key`. */
  readonly logSigner: EnclaveSigner
  /** X25519 device identity public key (`eid`). */
  readonly identityPublicKey: Uint8Array
  /** Secure-enclave serial number; P only. */
  readonly genuineId: string | undefined
  /**
   * The TLS files to serve: the device's own self-signed P-256 certificate, or the chain
   * imported by POST config `tls` once it is active (see `activateStagedTls`).
   */
  tlsCredentials(): TlsCredentials
  /**
   * X25519 of the device identity key with `peerPublicKey` (32 bytes):
   * the raw shared secret. Throws HalError for an unusable peer key.
   */
  identityAgree(peerPublicKey: Uint8Array): Uint8Array
  /** The stored login keys, or undefined before personalisation and after `wipe`. */
  credentials(): LoginCredentials | undefined
  setCredentials(credentials: LoginCredentials): Promise<void>
  /**
   * Factory reset of what personalisation wrote: the login keys and any staged or imported TLS
   * certificate (the own certificate is served again after the next restart). Identity, log key,
   * own TLS key, attestation key and provisioning survive.
   */
  wipe(): Promise<void>
  /** The attestation key as SPKI DER (ECDSA P-256). P only: HalUnsupportedError on E. */
  attestationPublicKey(): Uint8Array
  /** CSR and self-statement for the factory; works before and after provisioning. P only. */
  attestation(): AttestationRequest
  /** The factory's record, or undefined while not provisioned. P only. */
  provisioning(): ProvisioningRecord | undefined
  /** Stores the factory's record; the caller has verified it. Once: then AlreadyProvisionedError. P only. */
  provision(record: ProvisioningRecord): Promise<void>
  /** DER certificate of the factory CA this device was manufactured to trust. P only. */
  factoryRoot(): Uint8Array
  /** DER PKCS#10 for the device's own TLS key (P-256); CN = `hostname` (also a DNS SAN) or `hem-<devid>`. */
  tlsCsr(hostname?: string): Promise<Uint8Array>
  /**
   * Why `stageTls` would refuse `material`, or undefined when it would take it: DER certificates
   * each issued by the next, a P-256 or RSA (2048+) key in PKCS#8, certified by the leaf.
   */
  tlsProblem(material: TlsMaterial): TlsProblem | undefined
  /**
   * Checks (as tlsProblem) and stores a chain to serve after the next restart. Without `keyPkcs8` the leaf must
   * certify the device's own TLS key. A bad chain or key throws TlsMaterialError and stages nothing;
   * a later call replaces what an earlier one staged.
   */
  stageTls(material: TlsMaterial): Promise<void>
  /**
   * Makes staged TLS material the active one (tlsCredentials), and reads what is active again
   * (with --split another process changes it: auth's wipeout clears an imported set); true when
   * something was staged. Opening the HAL with the data-dir lock (a device boot) does this first;
   * an in-process reboot calls it before it restarts the gateway, a --split boot before it starts it.
   */
  activateStagedTls(): Promise<boolean>
  /**
   * Seals data at rest under the enclave's sealing key for `purpose`, one key per purpose, so
   * that with `--split` the storage process (disks) cannot open the key repository's records
   * and the keystore cannot open the disk key.
   */
  sealer(purpose: SealPurpose): Sealer
  /**
   * The journal's anchor, or undefined when the enclave holds none (before the first seal). Throws
   * JournalAnchorError for an anchor this enclave did not make (another device's, or edited).
   */
  journalAnchor(): Promise<JournalAnchor | undefined>
  /**
   * The anchor as the builds before signed anchors kept it (unsigned `{file, seq, head}`), when
   * that is what the enclave holds, else undefined: for the one migration at the trial boot of an
   * upgrade from such a build (eventstore/journal-anchoring.ts). Never an anchor to trust as such.
   */
  unsignedJournalAnchor(): Promise<JournalAnchor | undefined>
  /**
   * Replaces the anchor, whole or not at all, authenticated by the enclave for this device; the
   * journal calls it before a seal is written and again once it is durable. On hardware a monotonic
   * counter and its head, which nothing outside the enclave can move back.
   */
  setJournalAnchor(anchor: JournalAnchor): Promise<void>
}

/** What the enclave seals: the key repository's records, the Disk 1 key, or the backup passphrase's derived key. */
export type SealPurpose = 'keys' | 'disks' | 'backup'

export interface Sealer {
  /** AES-256-GCM under a key that never leaves the enclave, with `aad` bound in; the result is opaque. */
  seal(plaintext: Uint8Array, aad: Uint8Array): Promise<Uint8Array>
  /** Opens what `seal` made with the same `aad`; UnsealError when it was altered. */
  unseal(sealed: Uint8Array, aad: Uint8Array): Promise<Uint8Array>
}

export interface StorageGeometry {
  /** Embedded microSD capacity, in 512-byte sectors. */
  readonly capacitySectors: number
  readonly disk0Sectors: number
  readonly disk1Sectors: number
  /** Card registers as hex strings (P, shown with a valid token). */
  readonly csd: string
  readonly cid: string
}

export interface DiskLayout {
  disk0Sectors: number
  disk1Sectors: number
}

/** How an unlocked disk may be used (status `storage` shows `-` for a locked one). */
export type DiskMode = 'ro' | 'rw'

/** Disk 1's cipher at rest, as the high nibble of `storage_mode` names it. */
export type DiskCipher = 'AES-CTR' | 'AES-XTS'

/**
 * An unlocked disk: its 512-byte sectors, read and written whole, at most 2048 (1 MiB) a
 * call. Sectors never written read as zeros. After `close`, or once the disks are formatted or
 * erased, the disk is locked again and every call throws DiskLockedError.
 */
export interface DiskHandle {
  readonly disk: 0 | 1
  readonly sectors: number
  readonly mode: DiskMode
  /** True once closed, or locked by a format or erase under it. */
  readonly locked: boolean
  /** `count` sectors from `sector`. RangeError out of bounds. */
  read(sector: number, count: number): Promise<Uint8Array>
  /**
   * Writes whole sectors from `sector`. DiskReadOnlyError on
   * `ro`; RangeError for a partial sector or out of bounds.
   */
  write(sector: number, data: Uint8Array): Promise<void>
  /** Makes what was written so far durable (nothing to do on `ro`). */
  flush(): Promise<void>
  /** Makes what was written durable and locks the disk; a second close does nothing. */
  close(): Promise<void>
}

/** The embedded disks (P): Disk 0 regular, Disk 1 encrypted at rest. */
export interface DiskStore {
  /** The layout of the last finished format; undefined while the disks are unformatted. */
  layout(): DiskLayout | undefined
  /**
   * Repartitions the card (Disk 1 takes what Disk 0 leaves) and formats both, reporting percent
   * done. Disk 1 gets a new key: what it held before can no longer be read. The layout is the last
   * thing written, so a format cut short (a power cut) leaves the disks unformatted, or as they were
   * when cut before its first write. Aborting `signal` stops it at its next step with
   * FormatCancelledError, leaving the disks as such a cut does; a format already complete returns.
   */
  format(disk0Sectors: number, onProgress: (percent: number) => void, signal?: AbortSignal): Promise<void>
  /** Wipeout: the disks become unformatted and Disk 1's key is destroyed. */
  erase(): Promise<void>
  /**
   * Unlocks a disk: without a handle a disk is locked and its bytes cannot be reached. Disk 1
   * needs its cipher (`storage_mode`); Disk 0 is not encrypted and takes none.
   * DiskNotFormattedError while the disks are unformatted.
   */
  open(disk: 0 | 1, mode: DiskMode, cipher?: DiskCipher): Promise<DiskHandle>
}

export interface SignedComponent {
  version: string
  /** Ed25519 public key that signed this component. */
  publicKey: Uint8Array
  signature: Uint8Array
}

export type SlotName = 'A' | 'B'

export interface BootSlots {
  /** The slot the bootloader boots by default (the running one, unless this is a trial boot). */
  readonly active: SlotName
  /** The slot running now. */
  readonly running: SlotName
  /** True when this boot is the one trial of a newly installed slot: it must confirm its health. */
  readonly trial: boolean
  /** The firmware image running now. */
  readonly firmware: SignedComponent
  readonly bootloader: SignedComponent
}

/** How the last trial boot ended, as the bootloader recorded it. */
export interface TrialOutcome {
  result: 'committed' | 'rolled_back'
  slot: SlotName
  version: string
}

/** The A/B firmware slots, as the running firmware may change them. */
export interface FirmwareSlots {
  /**
   * Writes a build into the slot that is not running (`extract` fills a fresh directory) and
   * arms one trial boot of it at `level`; the bootloader makes it active only once it confirms.
   */
  install(extract: (dir: string) => Promise<void>, version: string, level: number): Promise<SlotName>
  /**
   * The anti-rollback floor now: it rises when a trial commits, while this firmware runs, and
   * a trial being confirmed already counts at its level.
   */
  floor(): Promise<number>
  /** The outcome of the last trial boot, once: a second call answers undefined. */
  takeOutcome(): Promise<TrialOutcome | undefined>
}

export type ImageKindName = 'fw' | 'ui'

/** Where an upload lands, one image per kind, before it is checked. */
export interface UpgradeStaging {
  /** Starts a new upload of `kind`: whatever was staged before is gone. */
  begin(kind: ImageKindName): Promise<StagingWriter>
  /** The finished upload of `kind`, or undefined. */
  staged(kind: ImageKindName): Promise<StagedImage | undefined>
  discard(kind: ImageKindName): Promise<void>
}

export interface StagingWriter {
  readonly written: number
  /** Appends in order. */
  write(data: Uint8Array): Promise<void>
  /** Makes the upload durable and the staged image of its kind. */
  finish(): Promise<void>
  /** Drops the partial upload. */
  abort(): Promise<void>
}

export interface StagedImage {
  readonly size: number
  read(position: number, length: number): Promise<Buffer>
  close(): Promise<void>
}

/** The management app's files (P), as the gateway serves them at `/`. */
export interface WebrootStore {
  /** The installed app: its directory and the SHA-256 of the image it came from; undefined before the first install. */
  current(): { dir: string; sha256: string } | undefined
  /** Unpacks a new app (`extract` fills a fresh directory) and makes it current at once. */
  install(extract: (dir: string) => Promise<void>, sha256: string): Promise<void>
}

/** An append-only file of the journal, opened for writing. */
export interface AppendHandle {
  /** Bytes durably stored so far. */
  readonly size: number
  /** Writes `data` at the end and makes it durable (fdatasync) before resolving. */
  append(data: Uint8Array): Promise<void>
  /** Cuts the file to `length` bytes, durably (recovery of a torn last line). */
  truncate(length: number): Promise<void>
  close(): Promise<void>
}

/** Where journal segment files live. Ids are 8 lowercase hex chars. */
export interface JournalMedia {
  /** Segment ids, ascending. */
  list(): Promise<string[]>
  read(id: string): Promise<Uint8Array>
  /** Streams bytes [0, end) of a segment without loading it whole. */
  stream(id: string, end?: number): AsyncIterable<Uint8Array>
  /** The segment's size in bytes now, or undefined when there is no such segment. */
  size(id: string): Promise<number | undefined>
  /** Up to `length` bytes from `start` (fewer at the end of the segment). */
  readRange(id: string, start: number, length: number): Promise<Uint8Array>
  /** Opens a segment for appending, creating it when missing. */
  open(id: string): Promise<AppendHandle>
}

/**
 * Where the key repository keeps its sealed records: `slotCount` slots of `slotSize` bytes,
 * each written whole. What a slot holds is the repository's business; the media only stores it.
 */
export interface KeySlotMedia {
  readonly slotCount: number
  /** 4096 on the device: the largest sealed record (an ML-DSA-87 key, about 2.9 KB) fits with room to spare. */
  readonly slotSize: number
  /** Every slot's bytes in slot order; a slot never written (or erased) reads as zeros. */
  readAll(): Promise<Uint8Array[]>
  /**
   * `length` bytes of the slots as one image (slot i at i * slotSize) from `offset`, as the media
   * holds them now. RangeError for a range that does not lie within the image.
   */
  read(offset: number, length: number): Promise<Uint8Array>
  /**
   * Stores `data`, zero-padded to `slotSize`, in slot `index`, durably (fdatasync) before it
   * resolves. RangeError for an index out of range or data longer than a slot.
   */
  write(index: number, data: Uint8Array): Promise<void>
  /** Zeroes every slot, durably: what they held is gone. */
  erase(): Promise<void>
  close(): Promise<void>
}

/** One small blob of the key store's (the sealed backup key), replaced whole: a crash leaves the old or the new. */
export interface KeystoreBlob {
  /** What was written last, or undefined when nothing is stored (or it was erased). */
  read(): Promise<Uint8Array | undefined>
  write(data: Uint8Array): Promise<void>
  /** Overwrites what is stored, then removes it; nothing happens when nothing is stored. */
  erase(): Promise<void>
}

export type EntropyFault = 'none' | 'stuck' | 'biased'

/** What `hemd sim` can do to a simulated device (sim HAL only), as the device's own processes see it. */
export interface FaultInjector {
  /** The chip temperature the sensor reads from now on; undefined returns to the normal reading. */
  setTemperature(celsius: number | undefined): Promise<void>
  /** `stuck` repeats one byte forever; `biased` makes four bytes in five zero. */
  setEntropy(fault: EntropyFault): Promise<void>
  /** While full, every write to device state fails as a full disk does (ENOSPC). */
  setDiskFull(full: boolean): Promise<void>
  /** Flips one byte inside a record line of the newest journal file; answers the file and line. */
  corruptJournal(): Promise<{ file: string; line: number }>
  /** Flips one byte of a key slot that holds a record; answers the slot, or undefined when none does. */
  corruptKeySlot(): Promise<{ slot: number } | undefined>
  /** P: every format of the disks stops at `point` until this is called again without it (or it is cancelled). */
  holdFormat(point: FormatHoldPoint | undefined): Promise<void>
}

/**
 * Where a held format stops: `start` before its first write (the last format's layout still in
 * place), `middle` with Disk 0 written and Disk 1 not (the new Disk 1 key in place, no layout),
 * `end` with both written and the new layout in place, just before the format returns.
 */
export type FormatHoldPoint = 'start' | 'middle' | 'end'

export interface Hal {
  readonly variant: Variant
  /** 8 bytes as 16 lowercase hex chars; stable for the life of the device. */
  readonly devid: string
  readonly clock: Clock
  readonly entropy: TestedEntropySource
  readonly temperature: TemperatureSensor
  readonly enclave: Enclave
  readonly storage: StorageGeometry
  /** P only; undefined on E. */
  readonly disks: DiskStore | undefined
  readonly boot: BootSlots
  readonly firmwareSlots: FirmwareSlots
  readonly staging: UpgradeStaging
  /** P only; undefined on E. */
  readonly webroot: WebrootStore | undefined
  readonly journal: JournalMedia
  readonly keySlots: KeySlotMedia
  /** The key store's sealed backup key (docs/backup.md), beside the key slots and erased with them at a wipeout. */
  readonly backupKey: KeystoreBlob
  /**
   * Ed25519 public key (raw 32 bytes) of the trusted backend whose
   * signed check-in replies the device obeys; configured per installation.
   */
  readonly backendKey: Uint8Array
  /** Ed25519 public key (raw 32 bytes) that firmware and ui images must be signed with; per installation. */
  readonly vendorKey: Uint8Array
  /** Whether any trust anchor is a published development key (deploy/keys/): the STARTUP record says so. */
  readonly developmentKeys: boolean
  /** Fault injection: the simulator has it, real hardware never does. */
  readonly faults?: FaultInjector
  /** Scratch directory for runtime files that are not device state (nats-server config, sockets). */
  readonly runDir: string
  /** Releases the exclusive hold on the device (the data-dir lock). */
  close(): Promise<void>
}

export interface OpenHalOptions {
  variant: Variant
  /** Where the device keeps its state (sim: everything; created 0700). */
  dataDir: string
  /** The running firmware image, as the bootloader verified it. */
  firmware: SignedComponent
  /** What the bootloader booted (hemd's launcher says); default the active slot, no trial. */
  booted?: { slot: SlotName; trial: boolean }
  /** Take the exclusive data-dir lock (default true). */
  lock?: boolean
  /**
   * Open only what the network-facing process needs (identity, clock, entropy, temperature, the
   * management app) of a device already created: the enclave, key slots, journal, disks, boot
   * slots and staging stay closed and throw when used. With `--split` as separate Unix users the
   * gateway cannot read them.
   */
  front?: boolean
  clock?: Clock
  entropy?: EntropySource
  /*
   * The trust anchors (TrustAnchors). Each defaults to the development one, for the HAL's own
   * tests: the runtime always passes the installation's (DeviceOptions.trust).
   */
  /** DER certificate of the factory CA a P device trusts. */
  factoryRoot?: Uint8Array
  /** The trusted backend's raw Ed25519 public key. */
  backendKey?: Uint8Array
  /** The vendor's raw Ed25519 public key, which images must be signed with. */
  vendorKey?: Uint8Array
}
