import { X509Certificate, createPrivateKey, createPublicKey, randomBytes, verify } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { connect, createServer, type TLSSocket } from 'node:tls'
import t from 'tap'
import { openHal, type SignedComponent } from '../hal/index.js'

const firmware: SignedComponent = {
  version: '2.0.0',
  publicKey: new Uint8Array(32),
  signature: new Uint8Array(64),
}

t.test('the TLS certificate is a self-signed P-256 certificate for localhost', async (t) => {
  const dataDir = t.testdir()
  const before = Date.now()
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  t.teardown(() => hal.close())
  const { certFile, keyFile, certDer } = hal.enclave.tlsCredentials()
  t.equal(certFile, join(dataDir, 'enclave', 'tls.crt.pem'))
  t.equal(keyFile, join(dataDir, 'enclave', 'tls.key.pem'))

  const cert = new X509Certificate(Buffer.from(certDer))
  t.same(new X509Certificate(readFileSync(certFile)).raw, cert.raw, 'the PEM file holds the DER')
  t.equal(cert.subject, `CN=hem-${hal.devid}`)
  t.equal(cert.issuer, cert.subject)
  t.equal(cert.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1')
  t.equal(cert.publicKey.asymmetricKeyType, 'ec')
  t.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1')
  t.ok(cert.verify(cert.publicKey), 'signed by its own key')
  t.ok(cert.checkPrivateKey(createPrivateKey(readFileSync(keyFile))))
  t.ok(cert.checkHost('localhost'))
  t.ok(cert.checkIP('127.0.0.1'))
  t.notOk(cert.ca)
  t.match(cert.serialNumber, /^[0-9A-F]{32}$/)
  const validFrom = Date.parse(cert.validFrom)
  const validTo = new Date(cert.validTo)
  t.ok(validFrom >= before - 1000 && validFrom <= Date.now(), 'valid from now')
  t.equal(validTo.getUTCFullYear(), new Date(validFrom).getUTCFullYear() + 20)
  t.match(readFileSync(keyFile, 'utf8'), /^-----BEGIN PRIVATE KEY-----\n/)
})

t.test('a real TLS 1.3 handshake with the certificate files', async (t) => {
  const hal = await openHal({ variant: 'E', dataDir: t.testdir(), firmware })
  t.teardown(() => hal.close())
  const { certFile, keyFile, certDer } = hal.enclave.tlsCredentials()
  const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (socket) =>
    socket.end('hello'),
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const { port } = server.address() as { port: number }

  const socket: TLSSocket = await new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, minVersion: 'TLSv1.3' }, () => resolve(s))
    s.on('error', reject)
  })
  t.equal(socket.getProtocol(), 'TLSv1.3')
  t.same(new Uint8Array(socket.getPeerCertificate().raw), certDer)
  socket.destroy()
})

t.test('the log signer signs with Ed25519', async (t) => {
  const hal = await openHal({ variant: 'P', dataDir: t.testdir(), firmware })
  t.teardown(() => hal.close())
  const { logSigner } = hal.enclave
  t.equal(logSigner.publicKey.length, 32)
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(logSigner.publicKey).toString('base64url') },
    format: 'jwk',
  })
  const message = randomBytes(100)
  const signature = logSigner.sign(message)
  t.equal(signature.length, 64)
  t.ok(verify(null, message, publicKey, signature))
  t.notOk(verify(null, randomBytes(100), publicKey, signature))
  t.notMatch(JSON.stringify(hal.enclave), /PRIVATE/, 'no private key in the enclave object')
})

t.test('secrets are readable by the owner only', async (t) => {
  const dataDir = join(t.testdir(), 'device')
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  t.teardown(() => hal.close())
  const mode = (path: string) => statSync(join(dataDir, path)).mode & 0o777
  for (const dir of ['.', 'enclave', 'boot', 'run']) t.equal(mode(dir), 0o700, `${dir}/ is 0700`)
  for (const file of ['log-signing.key.pem', 'identity.key.pem', 'tls.key.pem', 'tls.crt.pem']) {
    t.equal(mode(join('enclave', file)), 0o600, `enclave/${file} is 0600`)
  }
  t.equal(mode('device.json'), 0o600)
  t.equal(mode('hemd.lock'), 0o600)
})
