import 'reflect-metadata'
import { Pkcs10CertificateRequest, SubjectAlternativeNameExtension } from '@peculiar/x509'
import { X509Certificate, createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connect, createServer, type PeerCertificate } from 'node:tls'
import t from 'tap'
import { TlsMaterialError, openHal, type Hal, type SignedComponent, type TlsMaterial } from '../hal/index.js'
import { fromPem } from '../hal/x509/pem.js'
import { issue, makeCa, makeIntermediate, pkcs8, type TestCa } from './helpers/x509-fixtures.js'

const firmware: SignedComponent = { version: '2.0.0', publicKey: new Uint8Array(32), signature: new Uint8Array(64) }
const SAN = '2.5.29.17'
const root = await makeCa('Test Root')
const intermediate = await makeIntermediate(root, 'Test Intermediate')

async function open(t: { teardown(fn: () => unknown): void }, dataDir: string, lock = true): Promise<Hal> {
  const hal = await openHal({ variant: 'P', dataDir, firmware, lock })
  t.teardown(() => hal.close())
  return hal
}

/** The device's own TLS key, as the certificate of a fresh device shows it. */
function ownPublicKey(hal: Hal) {
  return new X509Certificate(Buffer.from(hal.enclave.tlsCredentials().certDer)).publicKey
}

async function chainFor(key: KeyObject, ca: TestCa = intermediate): Promise<Uint8Array[]> {
  return [await issue(ca, key, 'device.example'), ca.cert]
}

/** The leaf and the chain a TLS client receives from a server loaded with `hal`'s active files. */
async function served(
  t: { teardown(fn: () => unknown): void },
  hal: Hal,
): Promise<{ leaf: Uint8Array; issuer: Uint8Array | undefined }> {
  const { certFile, keyFile } = hal.enclave.tlsCredentials()
  const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (socket) => socket.end())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const { port } = server.address() as { port: number }
  const peer: PeerCertificate & { issuerCertificate?: PeerCertificate } = await new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, minVersion: 'TLSv1.3' }, () => {
      resolve(socket.getPeerCertificate(true))
      socket.destroy()
    })
    socket.on('error', reject)
  })
  const issuer =
    peer.issuerCertificate && peer.issuerCertificate.raw !== peer.raw
      ? new Uint8Array(peer.issuerCertificate.raw)
      : undefined
  return { leaf: new Uint8Array(peer.raw), issuer }
}

t.test('tlsCsr: a PKCS#10 for the own TLS key, signed by it', async (t) => {
  const hal = await open(t, t.testdir())
  const own = ownPublicKey(hal).export({ type: 'spki', format: 'der' })

  const csr = new Pkcs10CertificateRequest(await hal.enclave.tlsCsr())
  t.ok(await csr.verify())
  t.equal(csr.subject, `CN=hem-${hal.devid}`)
  t.same(Buffer.from(csr.publicKey.rawData), own)
  t.equal(csr.getExtension(SAN), null)

  const named = new Pkcs10CertificateRequest(await hal.enclave.tlsCsr('hem.example.org'))
  t.ok(await named.verify())
  t.equal(named.subject, 'CN=hem.example.org')
  const san = new SubjectAlternativeNameExtension(named.getExtension(SAN)?.rawData ?? new ArrayBuffer(0))
  t.same(san.names.toJSON(), [{ type: 'dns', value: 'hem.example.org' }])
})

t.test('a chain for the own key: staged, served after activateStagedTls, whole chain', async (t) => {
  const dataDir = t.testdir()
  const hal = await open(t, dataDir)
  const before = hal.enclave.tlsCredentials()
  const { keyFile } = before
  const chain = await chainFor(ownPublicKey(hal))
  t.equal(hal.enclave.tlsProblem({ certChainDer: chain }), undefined)
  await hal.enclave.stageTls({ certChainDer: chain })
  t.same(hal.enclave.tlsCredentials(), before, 'nothing changes before the restart')
  t.same((await served(t, hal)).leaf, before.certDer)

  t.equal(await hal.enclave.activateStagedTls(), true)
  const after = hal.enclave.tlsCredentials()
  t.same(after, { certFile: join(dataDir, 'enclave', 'tls-imported', 'chain.pem'), keyFile, certDer: chain[0] })
  t.same(fromPem(readFileSync(after.certFile, 'utf8'), 'CERTIFICATE'), chain, 'the PEM file holds the whole chain')
  t.same(
    await served(t, hal),
    { leaf: chain[0], issuer: chain[1] },
    'a TLS client gets the new leaf and its intermediate',
  )
  t.equal(await hal.enclave.activateStagedTls(), false, 'nothing more staged')
  for (const path of ['tls-imported']) t.equal(statSync(join(dataDir, 'enclave', path)).mode & 0o777, 0o700)
  t.equal(statSync(after.certFile).mode & 0o777, 0o600)
})

t.test('a chain with its own key becomes active at the next boot, not at a lock-free open', async (t) => {
  const dataDir = t.testdir()
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  const own = hal.enclave.tlsCredentials()
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const chain = await chainFor(privateKey)
  await hal.enclave.stageTls({ certChainDer: chain, keyPkcs8: pkcs8(privateKey) })
  await hal.close()

  const child = await open(t, dataDir, false)
  t.same(child.enclave.tlsCredentials(), own, 'a service process of the running device serves what is active')

  const booted = await open(t, dataDir)
  const active = booted.enclave.tlsCredentials()
  t.same(active.certDer, chain[0])
  t.equal(active.keyFile, join(dataDir, 'enclave', 'tls-imported', 'key.pem'))
  t.equal(statSync(active.keyFile).mode & 0o777, 0o600)
  t.ok(createPrivateKey(readFileSync(active.keyFile)).equals(privateKey), 'the imported key is served')
  t.same((await served(t, booted)).leaf, chain[0])
})

t.test('a key that does not match the leaf: error, nothing staged, the earlier staging kept', async (t) => {
  const dataDir = t.testdir()
  const hal = await open(t, dataDir)
  const good = await chainFor(ownPublicKey(hal))
  await hal.enclave.stageTls({ certChainDer: good })
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
  const mismatched: TlsMaterial = { certChainDer: await chainFor(ownPublicKey(hal)), keyPkcs8: pkcs8(other) }
  await t.rejects(hal.enclave.stageTls(mismatched), { name: 'TlsMaterialError', code: 'key_mismatch' })
  await t.rejects(
    hal.enclave.stageTls({ certChainDer: await chainFor(other) }),
    TlsMaterialError,
    'a chain for another key, without it',
  )
  t.equal(await hal.enclave.activateStagedTls(), true)
  t.same(hal.enclave.tlsCredentials().certDer, good[0], 'the good staging survived')
})

t.test('tlsProblem names what is wrong', async (t) => {
  const hal = await open(t, t.testdir())
  const own = ownPublicKey(hal)
  const problem = (material: TlsMaterial) => hal.enclave.tlsProblem(material)?.code
  const leaf = await issue(intermediate, own, 'device.example')
  t.equal(problem({ certChainDer: [] }), 'bad_certificate')
  t.equal(problem({ certChainDer: [new Uint8Array([0x30, 0x00])] }), 'bad_certificate')
  t.equal(
    problem({ certChainDer: [Buffer.concat([leaf, Uint8Array.of(0)])] }),
    'bad_certificate',
    'bytes after the certificate',
  )
  t.equal(
    problem({ certChainDer: [new TextEncoder().encode(new X509Certificate(leaf).toString())] }),
    'bad_certificate',
    'PEM',
  )
  t.equal(problem({ certChainDer: [leaf, root.cert] }), 'bad_chain', 'the intermediate is missing')
  t.equal(problem({ certChainDer: [intermediate.cert, leaf] }), 'bad_chain', 'out of order')
  t.equal(problem({ certChainDer: [leaf] }), undefined, 'the leaf alone will do')
  t.equal(problem({ certChainDer: [leaf, intermediate.cert, root.cert] }), undefined, 'up to the root')

  const ed25519 = generateKeyPairSync('ed25519').privateKey
  t.equal(problem({ certChainDer: await chainFor(ed25519), keyPkcs8: pkcs8(ed25519) }), 'unsupported_key')
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey
  t.equal(problem({ certChainDer: await chainFor(p384), keyPkcs8: pkcs8(p384) }), 'unsupported_key')
  const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey
  t.equal(problem({ certChainDer: await chainFor(rsa1024), keyPkcs8: pkcs8(rsa1024) }), 'unsupported_key')
  t.equal(problem({ certChainDer: [leaf], keyPkcs8: new Uint8Array([1, 2, 3]) }), 'unsupported_key', 'not PKCS#8')
  const rsa2048 = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  t.equal(problem({ certChainDer: await chainFor(rsa2048), keyPkcs8: pkcs8(rsa2048) }), undefined, 'RSA 2048')
  t.match(hal.enclave.tlsProblem({ certChainDer: [leaf, root.cert] }), {
    message: 'certificate 0 of the chain is not issued by certificate 1',
  })
})

t.test('an RSA chain with its key is served', async (t) => {
  const hal = await open(t, t.testdir())
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  const chain = await chainFor(rsa)
  await hal.enclave.stageTls({ certChainDer: chain, keyPkcs8: pkcs8(rsa) })
  await hal.enclave.activateStagedTls()
  t.same(await served(t, hal), { leaf: chain[0], issuer: chain[1] })
})

t.test('wipe forgets staged and imported TLS material; the own pair is served again', async (t) => {
  const dataDir = t.testdir()
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  const own = hal.enclave.tlsCredentials()
  const ownKey = ownPublicKey(hal)
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  await hal.enclave.stageTls({ certChainDer: await chainFor(privateKey), keyPkcs8: pkcs8(privateKey) })
  await hal.enclave.activateStagedTls()
  await hal.enclave.stageTls({ certChainDer: await chainFor(ownKey) })
  t.notSame(hal.enclave.tlsCredentials(), own)
  await hal.enclave.wipe()
  t.same(hal.enclave.tlsCredentials(), own)
  t.equal(await hal.enclave.activateStagedTls(), false, 'the staged chain is gone too')
  await hal.close()
  const again = await open(t, dataDir)
  t.same(again.enclave.tlsCredentials(), own)
})

t.test('imported files that do not match are reported at open', async (t) => {
  const dataDir = t.testdir()
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  await hal.enclave.stageTls({ certChainDer: await chainFor(privateKey), keyPkcs8: pkcs8(privateKey) })
  await hal.enclave.activateStagedTls()
  await hal.close()
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' })
  await writeFile(join(dataDir, 'enclave', 'tls-imported', 'key.pem'), other)
  await t.rejects(openHal({ variant: 'P', dataDir, firmware }), {
    name: 'HalCorruptError',
    message: /chain\.pem does not match the key/,
  })
})
