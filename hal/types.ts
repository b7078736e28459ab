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
}

export interface EntropySource {
  /** `n` bytes from the device's random source. Throws EntropyError when it cannot deliver. */
  read(n: number): Uint8Array
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

export interface Enclave {
  /** Signs audit journal files and seals; its public key is `eid_sign` and `/api/logger/key`. */
  readonly logSigner: EnclaveSigner
  /** X25519 device identity public key (`eid`). */
  readonly identityPublicKey: Uint8Array
  /** Secure-enclave serial number; P only. */
  readonly genuineId: string | undefined
  /** The device's own TLS certificate: self-signed P-256, generated at first boot. */
  tlsCredentials(): TlsCredentials
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

export interface SignedComponent {
  version: string
  /** Ed25519 public key that signed this component. */
  publicKey: Uint8Array
  signature: Uint8Array
}

export interface BootSlots {
  readonly active: 'A' | 'B'
  /** The firmware image running now. */
  readonly firmware: SignedComponent
  readonly bootloader: SignedComponent
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
  /** Opens a segment for appending, creating it when missing. */
  open(id: string): Promise<AppendHandle>
}

export interface Hal {
  readonly variant: Variant
  /** 8 bytes as 16 lowercase hex chars; stable for the life of the device. */
  readonly devid: string
  readonly clock: Clock
  readonly entropy: EntropySource
  readonly temperature: TemperatureSensor
  readonly enclave: Enclave
  readonly storage: StorageGeometry
  readonly boot: BootSlots
  readonly journal: JournalMedia
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
  /** Take the exclusive data-dir lock (default true). */
  lock?: boolean
  clock?: Clock
  entropy?: EntropySource
}
