import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AlreadyProvisionedError, HalCorruptError } from '../errors.js'
import type { AttestationRequest, ProvisioningRecord } from '../types.js'
import { createCsr } from '../x509/create-csr.js'
import { csrCertifies } from '../x509/csr-certifies.js'
import { attestationKeyHash, signGenuine } from '../x509/genuine-statement.js'
import { writeFileAtomic, writeFileOnce } from './atomic-file.js'
import { readOptionalEnclaveFile } from './enclave-files.js'
import { errorCode } from './error-code.js'

const ATTESTATION_KEY = 'attestation.key.pem'
const ATTESTATION_CSR = 'attestation.csr.der'
const PROVISIONING = 'provisioning.json'

export interface AttestationIdentity {
  devid: string
  genuineId: string
  /** DER certificate of the factory CA. */
  factoryRoot: Uint8Array
}

/** The P enclave's attestation key (ECDSA P-256) and the factory's once-only provisioning record. */
export class SimAttestation {
  #record: ProvisioningRecord | undefined

  private constructor(
    readonly publicKey: Uint8Array,
    readonly request: AttestationRequest,
    readonly factoryRoot: Uint8Array,
    readonly recordPath: string,
    record: ProvisioningRecord | undefined,
  ) {
    this.#record = record
  }

  static async load(dir: string, { devid, genuineId, factoryRoot }: AttestationIdentity): Promise<SimAttestation> {
    const recordPath = join(dir, PROVISIONING)
    const record = await readOptionalEnclaveFile(recordPath, parseRecord)
    const key = await loadOrCreateKey(join(dir, ATTESTATION_KEY), record !== undefined)
    const publicKey = new Uint8Array(createPublicKey(key).export({ type: 'spki', format: 'der' }))
    // Both ready at the open, so that attestation() answers without waiting.
    const request: AttestationRequest = {
      csr: await loadOrCreateCsr(join(dir, ATTESTATION_CSR), key, genuineId),
      genuine: signGenuine({ kind: 'device', devid, genuineId, keyHash: attestationKeyHash(publicKey) }, key),
    }
    return new SimAttestation(publicKey, request, factoryRoot, recordPath, record)
  }

  record(): ProvisioningRecord | undefined {
    return this.#record
  }

  async provision({ crt, genuine }: ProvisioningRecord): Promise<void> {
    if (this.#record) throw new AlreadyProvisionedError()
    const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
    try {
      await writeFileOnce(this.recordPath, `${JSON.stringify({ crt: b64(crt), genuine: b64(genuine) })}\n`, 0o600)
    } catch (err) {
      if (errorCode(err) === 'EEXIST') throw new AlreadyProvisionedError()
      throw err
    }
    this.#record = { crt: Uint8Array.from(crt), genuine: Uint8Array.from(genuine) }
  }
}

// Made at the first open of an unprovisioned device (also one created before attestation existed);
// a provisioned device without its key has lost what its certificate certifies.
async function loadOrCreateKey(path: string, provisioned: boolean): Promise<KeyObject> {
  const stored = await readOptionalEnclaveFile(path, (pem) => createPrivateKey(pem))
  if (stored) {
    if (stored.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
      throw new HalCorruptError(`${path} does not hold a P-256 key`)
    return stored
  }
  if (provisioned)
    throw new HalCorruptError(`${path} is missing on a provisioned device; its certificate is useless without it`)
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  await writeFileAtomic(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), 0o600)
  return privateKey
}

/**
 * The CSR is made once per identity and kept beside its key: the same request at every open,
 * and a new one once the key or the genuineId it names is no longer the one stored.
 */
async function loadOrCreateCsr(path: string, key: KeyObject, genuineId: string): Promise<Uint8Array> {
  const stored = await readFile(path).catch((err: unknown) => {
    if (errorCode(err) === 'ENOENT') return undefined
    throw new HalCorruptError(`${path} is unreadable`, { cause: err })
  })
  if (stored && csrCertifies(stored, key, genuineId)) return new Uint8Array(stored)
  const csr = createCsr({ privateKey: key, commonName: genuineId })
  await writeFileAtomic(path, csr, 0o600).catch((err: unknown) => {
    // A --split service may not write the enclave: the CSR is public and made again at its next open.
    if (errorCode(err) !== 'EACCES' && errorCode(err) !== 'EPERM') throw err
  })
  return csr
}

function parseRecord(text: string): ProvisioningRecord {
  const { crt, genuine } = JSON.parse(text) as Record<string, unknown>
  if (typeof crt !== 'string' || typeof genuine !== 'string') throw new Error('crt and genuine must be base64 strings')
  return { crt: new Uint8Array(Buffer.from(crt, 'base64')), genuine: new Uint8Array(Buffer.from(genuine, 'base64')) }
}
