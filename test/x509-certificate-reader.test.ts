// The page's certificate reader (hal/x509/certificate-reader.ts, node-free) against node's X509Certificate: the same
// names, times, serial, key and signed bytes, for the certificates a device meets (the development factory CA,
// P-256 chains, an openssl self-signed one, an RSA one); and nothing that is not exactly one certificate.
import { execFileSync } from 'node:child_process'
import { createPublicKey, generateKeyPairSync, verify, X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { DEV_FACTORY_ROOT_PEM } from '../hal/sim/factory-ca-dev.js'
import { CertificateFormatError, ecdsaSignatureBytes, readCertificate } from '../hal/x509/certificate-reader.js'
import { fromPem } from '../hal/x509/pem.js'
import { writeSelfSignedCert } from './helpers/self-signed-cert.js'
import { issue, makeCa } from './helpers/x509-fixtures.js'

/** The signature algorithms these certificates use, by OID, and their digest. */
const DIGESTS: Record<string, string> = {
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.113549.1.1.11': 'sha256',
}

function openssl(dir: string, name: string, key: string[], subject: string): Uint8Array {
  const file = join(dir, `${name}.pem`)
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      ...key,
      '-nodes',
      '-days',
      '30',
      '-subj',
      subject,
      '-keyout',
      join(dir, `${name}.key`),
      '-out',
      file,
    ],
    {
      stdio: 'ignore',
    },
  )
  return fromPem(readFileSync(file, 'utf8'), 'CERTIFICATE')[0]!
}

t.test('the same fields as node reads', async (t) => {
  const dir = t.testdir()
  const ca = await makeCa('Reader Test CA')
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  writeSelfSignedCert('hem.local', join(dir, 'self.pem'), join(dir, 'self.key'))
  const certificates: [string, Uint8Array, Uint8Array][] = [
    [
      'the development factory CA',
      fromPem(DEV_FACTORY_ROOT_PEM, 'CERTIFICATE')[0]!,
      fromPem(DEV_FACTORY_ROOT_PEM, 'CERTIFICATE')[0]!,
    ],
    [
      'a leaf of a test CA',
      await issue(ca, privateKey, 'hem.example', { altNames: [{ type: 'dns', value: 'hem.example' }] }),
      ca.cert,
    ],
    ['an openssl self-signed one', fromPem(readFileSync(join(dir, 'self.pem'), 'utf8'), 'CERTIFICATE')[0]!, undefined!],
    [
      'RSA, several attributes',
      openssl(dir, 'rsa', ['-newkey', 'rsa:2048'], '/C=DE/O=Ex Ample/OU=Ops/CN=Grüße'),
      undefined!,
    ],
    [
      'P-384',
      openssl(dir, 'p384', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384'], '/CN=p384.example'),
      undefined!,
    ],
  ]
  for (const [what, der, issuerDer] of certificates) {
    const node = new X509Certificate(Buffer.from(der))
    const read = readCertificate(der)
    t.equal(read.subject.text, node.subject.split('\n').join(', '), `${what}: subject`)
    t.equal(read.issuer.text, node.issuer.split('\n').join(', '), `${what}: issuer`)
    t.equal(read.notBefore.getTime(), Date.parse(node.validFrom), `${what}: valid from`)
    t.equal(read.notAfter.getTime(), Date.parse(node.validTo), `${what}: valid to`)
    t.equal(read.serial.replace(/^0+/, ''), node.serialNumber.toLowerCase().replace(/^0+/, ''), `${what}: serial`)
    t.ok(Buffer.from(read.spki).equals(node.publicKey.export({ type: 'spki', format: 'der' })), `${what}: key`)
    const issuerKey = issuerDer ? new X509Certificate(Buffer.from(issuerDer)).publicKey : node.publicKey
    const hash = DIGESTS[read.signatureAlgorithm]!
    t.ok(verify(hash, read.signed, issuerKey, read.signature), `${what}: the signed bytes and signature (${hash})`)
  }
  const dev = readCertificate(fromPem(DEV_FACTORY_ROOT_PEM, 'CERTIFICATE')[0]!)
  t.equal(dev.subject.commonName, 'HEM Development Factory CA')
  t.equal(dev.keyAlgorithm, '1.2.840.10045.2.1', 'an EC key')
  t.equal(dev.keyCurve, '1.2.840.10045.3.1.7', 'on P-256')
  t.equal(dev.signatureAlgorithm, '1.2.840.10045.4.3.2', 'ecdsa-with-SHA256')
  t.ok(Buffer.from(dev.subject.der).equals(Buffer.from(dev.issuer.der)), 'self-issued: the same Name DER')
})

t.test('ECDSA signatures as r || s', async (t) => {
  const dev = readCertificate(fromPem(DEV_FACTORY_ROOT_PEM, 'CERTIFICATE')[0]!)
  const raw = ecdsaSignatureBytes(dev.signature, 32)!
  t.equal(raw.length, 64)
  const key = createPublicKey({ key: Buffer.from(dev.spki), format: 'der', type: 'spki' })
  t.ok(verify('sha256', dev.signed, { key, dsaEncoding: 'ieee-p1363' }, raw), 'verifies as IEEE P1363')
  t.equal(ecdsaSignatureBytes(dev.signature.subarray(1), 32), undefined, 'not a SEQUENCE')
  t.equal(ecdsaSignatureBytes(Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x01), 32), undefined, 'one INTEGER only')
})

t.test('exactly one certificate, or CertificateFormatError', async (t) => {
  const der = fromPem(DEV_FACTORY_ROOT_PEM, 'CERTIFICATE')[0]!
  t.throws(() => readCertificate(Uint8Array.from([...der, 0])), CertificateFormatError, 'a byte after it')
  t.throws(() => readCertificate(der.subarray(0, der.length - 1)), CertificateFormatError, 'cut short')
  t.throws(() => readCertificate(new TextEncoder().encode(DEV_FACTORY_ROOT_PEM)), CertificateFormatError, 'PEM text')
  t.throws(() => readCertificate(new Uint8Array()), CertificateFormatError, 'nothing')
})
