import 'reflect-metadata'
import {
  AuthorityKeyIdentifierExtension,
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509Certificate,
  X509CertificateGenerator,
} from '@peculiar/x509'
import { createPrivateKey, createPublicKey, randomBytes, type KeyObject, type webcrypto } from 'node:crypto'
import { ecdsaKeyPair } from '../hal/index.js'

/** The operator's CA files do not make a P-256 CA whose key signs for its certificate. */
export class DomainCaError extends Error {
  override readonly name = 'DomainCaError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** The CA that certifies the zone's names: its key and its chain (issuing CA first), DER. */
export class DomainCa {
  private constructor(
    private readonly signingKey: webcrypto.CryptoKey,
    /** The issuing CA's certificate first, then any above it: what follows a leaf in a served chain. */
    readonly chain: readonly Uint8Array[],
  ) {}

  /** From PEM: one or more certificates (issuing CA first) and the issuing CA's ECDSA P-256 private key. */
  static async load(certPem: string, keyPem: string): Promise<DomainCa> {
    const chain = [...certPem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)].map(
      (match) => new Uint8Array(new X509Certificate(match[0]).rawData),
    )
    if (chain.length === 0) throw new DomainCaError('the CA certificate file holds no PEM certificate')
    let key: KeyObject
    try {
      key = createPrivateKey(keyPem)
    } catch (err) {
      throw new DomainCaError('the CA key file holds no PEM private key', { cause: err })
    }
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
      throw new DomainCaError('the CA key must be ECDSA P-256')
    const issuer = Buffer.from(chain[0]!)
    const keySpki = createPublicKey(key).export({ type: 'spki', format: 'der' })
    const certSpki = Buffer.from(new X509Certificate(issuer).publicKey.rawData)
    if (!certSpki.equals(keySpki)) throw new DomainCaError('the CA key is not the key of the first CA certificate')
    return new DomainCa((await ecdsaKeyPair(key)).privateKey, chain)
  }

  /** A TLS server certificate (DER) for `spki` (DER), naming `names` (the first also as CN), valid `from`…`until`. */
  async issue(spki: Uint8Array, names: readonly string[], from: Date, until: Date): Promise<Uint8Array> {
    const issuer = new X509Certificate(this.chain[0]!)
    const keyId = issuer.getExtension(SubjectKeyIdentifierExtension)?.keyId
    const cert = await X509CertificateGenerator.create({
      serialNumber: `01${randomBytes(15).toString('hex')}`,
      subject: `CN=${names[0]}`,
      issuer: issuer.subjectName,
      notBefore: from,
      notAfter: until,
      publicKey: spki,
      signingKey: this.signingKey,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [
        new BasicConstraintsExtension(false, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature | KeyUsageFlags.keyEncipherment, true),
        new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth]),
        new SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value }))),
        await SubjectKeyIdentifierExtension.create(spki),
        ...(keyId ? [new AuthorityKeyIdentifierExtension(keyId)] : []),
      ],
    })
    return new Uint8Array(cert.rawData)
  }

  /** b64 of the leaf's DER followed by the CA chain's: the `crt` the device's `tls` import takes. */
  chainOf(leaf: Uint8Array): string {
    return Buffer.concat([leaf, ...this.chain]).toString('base64')
  }
}
