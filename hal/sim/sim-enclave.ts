import { createPublicKey, diffieHellman, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { HalError, HalUnsupportedError } from '../errors.js'
import type {
  AttestationRequest,
  Clock,
  Enclave,
  EnclaveSigner,
  EntropySource,
  JournalAnchor,
  LoginCredentials,
  ProvisioningRecord,
  SealPurpose,
  Sealer,
  TlsCredentials,
  TlsMaterial,
  TlsProblem,
} from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { CredentialStore } from './credential-store.js'
import { Ed25519Signer, rawPublicKey } from './ed25519-signer.js'
import { readPrivateKey } from './enclave-files.js'
import { JournalAnchorFile } from './journal-anchor-file.js'
import { SealingKey } from './sealing-key.js'
import { SimAttestation } from './sim-attestation.js'
import { TlsStore } from './tls-store.js'

const LOG_SIGNING_KEY = 'log-signing.key.pem'
const IDENTITY_KEY = 'identity.key.pem'
const CREDENTIALS = 'credentials.json'
const JOURNAL_ANCHOR = 'journal-anchor.json'
/** One file per purpose, read only by the process that seals for it. */
const SEALING_KEYS: Readonly<Record<SealPurpose, string>> = {
  keys: 'sealing.key',
  disks: 'disk-sealing.key',
  backup: 'backup-sealing.key',
}

export interface SimEnclaveIdentity {
  devid: string
  /** Set on P only: a P enclave has an attestation key. */
  genuineId: string | undefined
  /** DER certificate of the factory CA (P). */
  factoryRoot: Uint8Array
}

/** The sim's secure enclave: key files under `dataDir/enclave`, readable by the owner only. */
export class SimEnclave implements Enclave {
  readonly logSigner: EnclaveSigner
  readonly identityPublicKey: Uint8Array
  readonly #identityKey: KeyObject
  readonly #tls: TlsStore
  readonly #credentials: CredentialStore
  readonly #attestation: SimAttestation | undefined
  readonly #sealing: Record<SealPurpose, SealingKey>
  readonly #anchor: JournalAnchorFile

  private constructor(
    logSigningKey: KeyObject,
    identityKey: KeyObject,
    tls: TlsStore,
    credentials: CredentialStore,
    attestation: SimAttestation | undefined,
    sealing: Record<SealPurpose, SealingKey>,
    anchor: JournalAnchorFile,
    readonly genuineId: string | undefined,
  ) {
    this.logSigner = new Ed25519Signer(logSigningKey)
    this.identityPublicKey = rawPublicKey(identityKey)
    this.#identityKey = identityKey
    this.#tls = tls
    this.#credentials = credentials
    this.#attestation = attestation
    this.#sealing = sealing
    this.#anchor = anchor
  }

  /** Generates every key of a new device and stores them in `dir`. */
  static async create(
    dir: string,
    identity: SimEnclaveIdentity,
    entropy: EntropySource,
    clock: Clock,
  ): Promise<SimEnclave> {
    await mkdir(dir, { recursive: true, mode: 0o700 })
    const pkcs8Pem = { format: 'pem', type: 'pkcs8' } as const
    await writeFileAtomic(join(dir, LOG_SIGNING_KEY), generateKeyPairSync('ed25519').privateKey.export(pkcs8Pem), 0o600)
    await writeFileAtomic(join(dir, IDENTITY_KEY), generateKeyPairSync('x25519').privateKey.export(pkcs8Pem), 0o600)
    await TlsStore.create(dir, identity.devid, entropy, clock)
    return SimEnclave.load(dir, identity, entropy, true)
  }

  /** `activateStagedTls`: true for the open of a device boot (the data-dir lock holder). */
  static async load(
    dir: string,
    identity: SimEnclaveIdentity,
    entropy: EntropySource,
    activateStagedTls: boolean,
  ): Promise<SimEnclave> {
    const logSigningKey = await readPrivateKey(join(dir, LOG_SIGNING_KEY), 'ed25519')
    const identityKey = await readPrivateKey(join(dir, IDENTITY_KEY), 'x25519')
    const tls = await TlsStore.load(dir, identity.devid, activateStagedTls)
    const credentials = await CredentialStore.load(join(dir, CREDENTIALS))
    const { genuineId } = identity
    const attestation = genuineId === undefined ? undefined : await SimAttestation.load(dir, { ...identity, genuineId })
    const sealing = {
      keys: new SealingKey(join(dir, SEALING_KEYS.keys), entropy),
      disks: new SealingKey(join(dir, SEALING_KEYS.disks), entropy),
      backup: new SealingKey(join(dir, SEALING_KEYS.backup), entropy),
    }
    const anchor = new JournalAnchorFile(join(dir, JOURNAL_ANCHOR), identity.devid, logSigningKey)
    return new SimEnclave(logSigningKey, identityKey, tls, credentials, attestation, sealing, anchor, genuineId)
  }

  sealer(purpose: SealPurpose): Sealer {
    const key = this.#sealing[purpose]
    if (!key) throw new RangeError('unknown sealing purpose')
    return key
  }

  journalAnchor(): Promise<JournalAnchor | undefined> {
    return this.#anchor.read()
  }

  unsignedJournalAnchor(): Promise<JournalAnchor | undefined> {
    return this.#anchor.readUnsigned()
  }

  setJournalAnchor(anchor: JournalAnchor): Promise<void> {
    return this.#anchor.write(anchor)
  }

  tlsCredentials(): TlsCredentials {
    return this.#tls.credentials()
  }

  identityAgree(peerPublicKey: Uint8Array): Uint8Array {
    if (peerPublicKey.length !== 32) throw new HalError('the peer key is not a 32-byte X25519 public key')
    const x = Buffer.from(peerPublicKey).toString('base64url')
    try {
      const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x }, format: 'jwk' })
      return new Uint8Array(diffieHellman({ privateKey: this.#identityKey, publicKey }))
    } catch (err) {
      // OpenSSL refuses small-order points, whose shared secret is all zeros.
      throw new HalError('no shared secret with this peer key', { cause: err })
    }
  }

  credentials(): LoginCredentials | undefined {
    return this.#credentials.get()
  }

  setCredentials(credentials: LoginCredentials): Promise<void> {
    return this.#credentials.set(credentials)
  }

  async wipe(): Promise<void> {
    await this.#credentials.clear()
    await this.#tls.clear()
  }

  attestationPublicKey(): Uint8Array {
    return this.#requireAttestation().publicKey
  }

  attestation(): AttestationRequest {
    return this.#requireAttestation().request
  }

  provisioning(): ProvisioningRecord | undefined {
    return this.#requireAttestation().record()
  }

  provision(record: ProvisioningRecord): Promise<void> {
    return this.#requireAttestation().provision(record)
  }

  factoryRoot(): Uint8Array {
    return this.#requireAttestation().factoryRoot
  }

  tlsCsr(hostname?: string): Promise<Uint8Array> {
    return this.#tls.csr(hostname)
  }

  tlsProblem(material: TlsMaterial): TlsProblem | undefined {
    return this.#tls.problem(material)
  }

  stageTls(material: TlsMaterial): Promise<void> {
    return this.#tls.stage(material)
  }

  activateStagedTls(): Promise<boolean> {
    return this.#tls.activate()
  }

  #requireAttestation(): SimAttestation {
    if (!this.#attestation) throw new HalUnsupportedError('variant E has no attestation key')
    return this.#attestation
  }
}
