import { X509Certificate, createPrivateKey, randomBytes, type KeyObject } from 'node:crypto'
import { mkdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { HalCorruptError, TlsMaterialError } from '../errors.js'
import type { Clock, EntropySource, TlsCredentials, TlsMaterial, TlsProblem } from '../types.js'
import { createCsr } from '../x509/create-csr.js'
import { fromPem, toPem } from '../x509/pem.js'
import { tlsChainProblem } from '../x509/tls-chain-problem.js'
import { syncDirectory, writeFileAtomic } from './atomic-file.js'
import { exists, readEnclaveFile, readPrivateKey } from './enclave-files.js'
import { createTlsCertificate } from './tls-certificate.js'

// The device's own pair, made at first boot and kept for good.
const OWN_CERT = 'tls.crt.pem'
const OWN_KEY = 'tls.key.pem'
// An imported chain (and its key, unless it certifies the own key) lives in a directory that is
// replaced by one rename: a crash leaves the old set or the new one, never half of each.
const STAGED = 'tls-staged'
const IMPORTED = 'tls-imported'
const CHAIN = 'chain.pem'
const KEY = 'key.pem'

/** The enclave's TLS material: the own self-signed pair, an imported set, and one staged for the next restart. */
export class TlsStore {
  readonly #ownKey: KeyObject
  #active: TlsCredentials

  private constructor(
    readonly dir: string,
    readonly devid: string,
    ownKey: KeyObject,
    readonly own: TlsCredentials,
  ) {
    this.#ownKey = ownKey
    this.#active = own
  }

  static async create(dir: string, devid: string, entropy: EntropySource, clock: Clock): Promise<void> {
    const tls = createTlsCertificate(devid, entropy.read(16), clock.now())
    await writeFileAtomic(join(dir, OWN_KEY), tls.keyPem, 0o600)
    await writeFileAtomic(join(dir, OWN_CERT), tls.certPem, 0o600)
  }

  /** With `activate`, staged material becomes active first: the open of a device boot. */
  static async load(dir: string, devid: string, activate: boolean): Promise<TlsStore> {
    const ownKeyFile = join(dir, OWN_KEY)
    const ownKey = await readPrivateKey(ownKeyFile, 'ec')
    const own = await readCredentials(join(dir, OWN_CERT), ownKeyFile)
    const store = new TlsStore(dir, devid, ownKey, own)
    if (activate) await store.activate()
    else store.#active = await store.#readActive()
    return store
  }

  credentials(): TlsCredentials {
    return this.#active
  }

  async csr(hostname?: string): Promise<Uint8Array> {
    return createCsr({
      privateKey: this.#ownKey,
      commonName: hostname ?? `hem-${this.devid}`,
      ...(hostname ? { dnsNames: [hostname] } : {}),
    })
  }

  problem({ certChainDer, keyPkcs8 }: TlsMaterial): TlsProblem | undefined {
    const key = keyPkcs8 ? parsePkcs8(keyPkcs8) : this.#ownKey
    return key
      ? tlsChainProblem(certChainDer, key)
      : { code: 'unsupported_key', message: 'the TLS key is not an unencrypted PKCS#8 private key' }
  }

  async stage(material: TlsMaterial): Promise<void> {
    const problem = this.problem(material)
    if (problem) throw new TlsMaterialError(problem.code, problem.message)
    const { certChainDer, keyPkcs8 } = material
    const temp = join(this.dir, `${STAGED}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
    await mkdir(temp, { mode: 0o700 })
    try {
      await writeFileAtomic(join(temp, CHAIN), certChainDer.map((der) => toPem('CERTIFICATE', der)).join(''), 0o600)
      // Written as node re-encodes it: exactly the key that was checked, nothing trailing.
      const key = keyPkcs8 && parsePkcs8(keyPkcs8)
      if (key) await writeFileAtomic(join(temp, KEY), key.export({ type: 'pkcs8', format: 'pem' }), 0o600)
    } catch (err) {
      // A set that could not be written whole (a full disk) leaves nothing behind; what was staged before stays.
      await rm(temp, { recursive: true, force: true })
      throw err
    }
    await rm(join(this.dir, STAGED), { recursive: true, force: true })
    await rename(temp, join(this.dir, STAGED))
    await syncDirectory(this.dir)
  }

  async activate(): Promise<boolean> {
    const staged = join(this.dir, STAGED)
    const activated = await exists(join(staged, CHAIN))
    if (activated) {
      const imported = join(this.dir, IMPORTED)
      await rm(imported, { recursive: true, force: true })
      await rename(staged, imported)
      await syncDirectory(this.dir)
    }
    // Read again in any case: with --split another process changes the set (auth's wipeout clears it).
    this.#active = await this.#readActive()
    return activated
  }

  /** Forgets staged and imported material: the own pair is served from the next restart on. */
  async clear(): Promise<void> {
    await rm(join(this.dir, STAGED), { recursive: true, force: true })
    await rm(join(this.dir, IMPORTED), { recursive: true, force: true })
    await syncDirectory(this.dir)
    this.#active = this.own
  }

  async #readActive(): Promise<TlsCredentials> {
    const imported = join(this.dir, IMPORTED)
    const certFile = join(imported, CHAIN)
    if (!(await exists(certFile))) return this.own
    const keyFile = join(imported, KEY)
    return readCredentials(certFile, (await exists(keyFile)) ? keyFile : this.own.keyFile)
  }
}

async function readCredentials(certFile: string, keyFile: string): Promise<TlsCredentials> {
  const key = await readEnclaveFile(keyFile, (pem) => createPrivateKey(pem))
  const leaf = await readEnclaveFile(
    certFile,
    (pem) => new X509Certificate(Buffer.from(fromPem(pem, 'CERTIFICATE')[0] ?? [])),
  )
  if (!leaf.checkPrivateKey(key)) throw new HalCorruptError(`${certFile} does not match the key in ${keyFile}`)
  return { certFile, keyFile, certDer: new Uint8Array(leaf.raw) }
}

function parsePkcs8(der: Uint8Array): KeyObject | undefined {
  try {
    return createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' })
  } catch {
    return undefined
  }
}
