import { X509Certificate, createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { HalCorruptError } from '../errors.js'
import type { Clock, Enclave, EnclaveSigner, EntropySource, TlsCredentials } from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { Ed25519Signer, rawPublicKey } from './ed25519-signer.js'
import { createTlsCertificate } from './tls-certificate.js'

const LOG_SIGNING_KEY = 'log-signing.key.pem'
const IDENTITY_KEY = 'identity.key.pem'
const TLS_CERT = 'tls.crt.pem'
const TLS_KEY = 'tls.key.pem'

/** The sim's secure enclave: key files under `dataDir/enclave`, readable by the owner only. */
export class SimEnclave implements Enclave {
  readonly logSigner: EnclaveSigner
  readonly identityPublicKey: Uint8Array
  readonly #tls: TlsCredentials

  private constructor(
    logSigningKey: KeyObject,
    identityKey: KeyObject,
    tls: TlsCredentials,
    readonly genuineId: string | undefined,
  ) {
    this.logSigner = new Ed25519Signer(logSigningKey)
    this.identityPublicKey = rawPublicKey(identityKey)
    this.#tls = tls
  }

  tlsCredentials(): TlsCredentials {
    return this.#tls
  }

  /** Generates every key of a new device and stores them in `dir`. */
  static async create(
    dir: string,
    devid: string,
    genuineId: string | undefined,
    entropy: EntropySource,
    clock: Clock,
  ): Promise<SimEnclave> {
    await mkdir(dir, { recursive: true, mode: 0o700 })
    const pkcs8Pem = { format: 'pem', type: 'pkcs8' } as const
    const tls = createTlsCertificate(devid, entropy.read(16), clock.now())
    await writeFileAtomic(join(dir, LOG_SIGNING_KEY), generateKeyPairSync('ed25519').privateKey.export(pkcs8Pem), 0o600)
    await writeFileAtomic(join(dir, IDENTITY_KEY), generateKeyPairSync('x25519').privateKey.export(pkcs8Pem), 0o600)
    await writeFileAtomic(join(dir, TLS_KEY), tls.keyPem, 0o600)
    await writeFileAtomic(join(dir, TLS_CERT), tls.certPem, 0o600)
    return SimEnclave.load(dir, genuineId)
  }

  static async load(dir: string, genuineId: string | undefined): Promise<SimEnclave> {
    const logSigningKey = await readPrivateKey(join(dir, LOG_SIGNING_KEY), 'ed25519')
    const identityKey = await readPrivateKey(join(dir, IDENTITY_KEY), 'x25519')
    const keyFile = join(dir, TLS_KEY)
    const certFile = join(dir, TLS_CERT)
    const tlsKey = await readPrivateKey(keyFile, 'ec')
    const cert = await readEnclaveFile(certFile, (pem) => new X509Certificate(pem))
    if (!cert.checkPrivateKey(tlsKey)) throw new HalCorruptError(`${certFile} does not match the key in ${keyFile}`)
    return new SimEnclave(logSigningKey, identityKey, { certFile, keyFile, certDer: new Uint8Array(cert.raw) }, genuineId)
  }
}

async function readPrivateKey(path: string, type: string): Promise<KeyObject> {
  const key = await readEnclaveFile(path, (pem) => createPrivateKey(pem))
  if (key.asymmetricKeyType !== type) {
    throw new HalCorruptError(`${path} holds a ${key.asymmetricKeyType} key where an ${type} key belongs`)
  }
  return key
}

async function readEnclaveFile<T>(path: string, parse: (pem: string) => T): Promise<T> {
  try {
    return parse(await readFile(path, 'utf8'))
  } catch (err) {
    throw new HalCorruptError(`enclave file ${path} is missing or unreadable; the device cannot be restored from it`, {
      cause: err,
    })
  }
}
