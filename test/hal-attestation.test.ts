import 'reflect-metadata'
import { Pkcs10CertificateRequest } from '@peculiar/x509'
import { X509Certificate, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { signAttestation } from '../factory/sign-attestation.js'
import { verifyProvisioning } from '../actors/auth/verify-provisioning.js'
import {
  AlreadyProvisionedError,
  HalCorruptError,
  HalError,
  HalUnsupportedError,
  openHal,
  type Hal,
  type OpenHalOptions,
  type SignedComponent,
} from '../hal/index.js'
import { DEV_FACTORY_ROOT_PEM } from '../hal/sim/factory-ca-dev.js'
import { attestationKeyHash, parseGenuine, verifyGenuine } from '../hal/x509/genuine-statement.js'
import { makeCa } from './helpers/x509-fixtures.js'

const firmware: SignedComponent = { version: '2.0.0', publicKey: new Uint8Array(32), signature: new Uint8Array(64) }
const devCaPem = readFileSync(new URL('../deploy/keys/factory-ca-dev.crt.pem', import.meta.url), 'utf8')
const devCa = {
  key: createPrivateKey(readFileSync(new URL('../deploy/keys/factory-ca-dev.key.pem', import.meta.url), 'utf8')),
  cert: new Uint8Array(new X509Certificate(devCaPem).raw),
}

async function open(
  t: { teardown(fn: () => unknown): void },
  dataDir: string,
  options: Partial<OpenHalOptions> = {},
): Promise<Hal> {
  const hal = await openHal({ variant: 'P', dataDir, firmware, ...options })
  t.teardown(() => hal.close())
  return hal
}

function contextOf(hal: Hal) {
  const { enclave } = hal
  return {
    attestationPublicKey: enclave.attestationPublicKey(),
    factoryRoot: enclave.factoryRoot(),
    genuineId: enclave.genuineId as string,
    devid: hal.devid,
    now: Date.now(),
  }
}

t.test('before provisioning: a CSR for the attestation key and a signed self-statement', async (t) => {
  const hal = await open(t, t.testdir())
  const { enclave } = hal
  const { csr: csrDer, genuine } = enclave.attestation()
  const spki = enclave.attestationPublicKey()
  const key = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' })
  t.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1', 'ECDSA P-256')

  const csr = new Pkcs10CertificateRequest(csrDer)
  t.ok(await csr.verify(), 'the CSR is signed by its own key')
  t.equal(csr.subject, `CN=${enclave.genuineId}`)
  t.same(new Uint8Array(csr.publicKey.rawData), spki, 'for the attestation key')

  const statement = parseGenuine(genuine)
  t.match(statement, { kind: 'device', devid: hal.devid, genuineId: enclave.genuineId })
  t.same(statement?.keyHash, attestationKeyHash(spki))
  t.ok(statement && verifyGenuine(statement, key), 'signed by the attestation key')
  t.notOk(
    statement && verifyGenuine(statement, generateKeyPairSync('ed25519').publicKey),
    'an Ed25519 key verifies nothing',
  )
  t.equal(enclave.provisioning(), undefined)
})

t.test('provision once: stored, kept across opens, refused the second time', async (t) => {
  const dataDir = t.testdir()
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  const spki = hal.enclave.attestationPublicKey()
  const signed = await signAttestation(hal.enclave.attestation(), devCa)
  t.same(verifyProvisioning(signed, contextOf(hal)), { ok: true })
  const record = { crt: signed.crt, genuine: signed.genuine }
  await hal.enclave.provision(record)
  t.same(hal.enclave.provisioning(), record)
  await t.rejects(hal.enclave.provision(record), AlreadyProvisionedError)
  t.equal(statSync(join(dataDir, 'enclave', 'provisioning.json')).mode & 0o777, 0o600)
  t.equal(statSync(join(dataDir, 'enclave', 'attestation.key.pem')).mode & 0o777, 0o600)
  t.notMatch(JSON.stringify(hal.enclave), /PRIVATE/, 'no private key in the enclave object')
  await hal.close()

  const again = await open(t, dataDir)
  t.same(again.enclave.provisioning(), record)
  t.same(again.enclave.attestationPublicKey(), spki, 'the same attestation key')
  t.ok(parseGenuine(again.enclave.attestation().genuine), 'attestation still answers after provisioning')
  await t.rejects(again.enclave.provision(record), {
    name: 'AlreadyProvisionedError',
    message: 'the enclave is already provisioned',
  })
})

t.test('the CSR is made once per identity: kept across opens, made anew for another key or genuineId', async (t) => {
  const dataDir = t.testdir()
  const csrFile = join(dataDir, 'enclave', 'attestation.csr.der')
  const reopen = async () => {
    const hal = await openHal({ variant: 'P', dataDir, firmware })
    const request = { csr: hal.enclave.attestation().csr, spki: hal.enclave.attestationPublicKey() }
    await hal.close()
    return request
  }
  const certifies = async ({ csr, spki }: { csr: Uint8Array; spki: Uint8Array }, commonName: string) => {
    const parsed = new Pkcs10CertificateRequest(csr)
    return (
      (await parsed.verify()) &&
      parsed.subject === `CN=${commonName}` &&
      Buffer.from(parsed.publicKey.rawData).equals(spki)
    )
  }
  const first = await reopen()
  const { genuineId } = JSON.parse(readFileSync(join(dataDir, 'device.json'), 'utf8')) as { genuineId: string }
  t.ok(await certifies(first, genuineId), 'the first open makes it for the attestation key')
  t.same(new Uint8Array(readFileSync(csrFile)), first.csr, 'kept beside the key')
  t.equal(statSync(csrFile).mode & 0o777, 0o600)
  // An ECDSA signature is never made twice alike: equal bytes are the stored request.
  t.same((await reopen()).csr, first.csr, 'a second open does not make it again')

  await rm(join(dataDir, 'enclave', 'attestation.key.pem'))
  const newKey = await reopen()
  t.notSame(newKey.spki, first.spki)
  t.ok(await certifies(newKey, genuineId), 'a new key, a new CSR for it')

  const identity = JSON.parse(readFileSync(join(dataDir, 'device.json'), 'utf8')) as Record<string, unknown>
  await writeFile(join(dataDir, 'device.json'), JSON.stringify({ ...identity, genuineId: 'SIM-OTHER' }))
  const renamed = await reopen()
  t.ok(await certifies(renamed, 'SIM-OTHER'), 'another genuineId, a new CSR naming it')

  for (const [what, bytes] of [
    ['cut short', readFileSync(csrFile).subarray(0, 40)],
    ['with another signature', Buffer.from(withChangedSignature(renamed.csr))],
    ['empty', Buffer.alloc(0)],
  ] as const) {
    await writeFile(csrFile, bytes)
    t.ok(await certifies(await reopen(), 'SIM-OTHER'), `a stored CSR ${what} is made anew`)
  }
})

/** `csr` with one byte of its signature changed: the signed part is intact, the signature no longer fits. */
function withChangedSignature(csr: Uint8Array): Uint8Array {
  const changed = Uint8Array.from(csr)
  changed[changed.length - 2]! ^= 0x01
  return changed
}

t.test('two processes of one device cannot both provision it', async (t) => {
  const dataDir = t.testdir()
  const first = await open(t, dataDir)
  const second = await open(t, dataDir, { lock: false })
  const record = await signAttestation(first.enclave.attestation(), devCa)
  await first.enclave.provision(record)
  t.equal(second.enclave.provisioning(), undefined, 'the other view has not seen it yet')
  await t.rejects(second.enclave.provision(record), AlreadyProvisionedError, 'but the file says no')
})

t.test('E has no attestation', async (t) => {
  const dataDir = t.testdir()
  const hal = await open(t, dataDir, { variant: 'E' })
  const { enclave } = hal
  t.throws(() => enclave.attestation(), HalUnsupportedError)
  t.throws(() => enclave.attestationPublicKey(), HalUnsupportedError)
  t.throws(() => enclave.provisioning(), { name: 'HalUnsupportedError', message: 'variant E has no attestation key' })
  t.throws(() => enclave.factoryRoot(), HalUnsupportedError)
  t.throws(() => enclave.provision({ crt: new Uint8Array(1), genuine: new Uint8Array(1) }), HalUnsupportedError)
  t.throws(() => statSync(join(dataDir, 'enclave', 'attestation.key.pem')), { code: 'ENOENT' })
})

t.test('the factory root: the development CA unless the firmware names another', async (t) => {
  t.equal(DEV_FACTORY_ROOT_PEM, devCaPem, 'the embedded copy is deploy/keys/factory-ca-dev.crt.pem')
  const hal = await open(t, t.testdir())
  t.same(hal.enclave.factoryRoot(), devCa.cert)

  const other = await makeCa('Other Factory')
  const custom = await open(t, t.testdir(), { factoryRoot: other.cert })
  t.same(custom.enclave.factoryRoot(), other.cert)
  await t.rejects(openHal({ variant: 'P', dataDir: t.testdir(), firmware, factoryRoot: new Uint8Array([1, 2, 3]) }), {
    name: 'HalError',
    message: 'the factory root is not a DER X.509 certificate',
  })
})

t.test('a P device made before attestation gets its key at the next open, unless provisioned', async (t) => {
  const dataDir = t.testdir()
  const first = await openHal({ variant: 'P', dataDir, firmware })
  const before = first.enclave.attestationPublicKey()
  await first.close()
  await rm(join(dataDir, 'enclave', 'attestation.key.pem'))
  const second = await openHal({ variant: 'P', dataDir, firmware })
  t.notSame(second.enclave.attestationPublicKey(), before, 'a new key')
  await second.enclave.provision(await signAttestation(second.enclave.attestation(), devCa))
  await second.close()

  await rm(join(dataDir, 'enclave', 'attestation.key.pem'))
  await t.rejects(openHal({ variant: 'P', dataDir, firmware }), {
    name: 'HalCorruptError',
    message: /missing on a provisioned device/,
  })
  const ed25519 = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' })
  await writeFile(join(dataDir, 'enclave', 'attestation.key.pem'), ed25519)
  await t.rejects(openHal({ variant: 'P', dataDir, firmware }), HalCorruptError)
  await writeFile(join(dataDir, 'enclave', 'provisioning.json'), '{"crt": 1}')
  await t.rejects(openHal({ variant: 'P', dataDir, firmware }), {
    name: 'HalCorruptError',
    message: /provisioning\.json/,
  })
})

t.test('identityAgree is X25519 with the eid key', async (t) => {
  const hal = await open(t, t.testdir())
  const peer = generateKeyPairSync('x25519')
  const eid = createPublicKey({
    key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(hal.enclave.identityPublicKey).toString('base64url') },
    format: 'jwk',
  })
  const peerRaw = Buffer.from(peer.publicKey.export({ format: 'jwk' }).x ?? '', 'base64url')
  const shared = hal.enclave.identityAgree(peerRaw)
  t.same(shared, new Uint8Array(diffieHellman({ privateKey: peer.privateKey, publicKey: eid })))
  t.throws(() => hal.enclave.identityAgree(new Uint8Array(31)), { name: 'HalError', message: /32-byte/ })
  t.throws(() => hal.enclave.identityAgree(new Uint8Array(32)), {
    name: 'HalError',
    message: 'no shared secret with this peer key',
  })
})

t.test('credentials: stored 0600, kept across opens, cleared by wipe with nothing else', async (t) => {
  const dataDir = t.testdir()
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  t.equal(hal.enclave.credentials(), undefined)
  const credentials = { user: new Uint8Array(32).fill(1), master: new Uint8Array(32).fill(2) }
  await hal.enclave.setCredentials(credentials)
  t.same(hal.enclave.credentials(), credentials)
  await t.rejects(hal.enclave.setCredentials({ user: new Uint8Array(31), master: credentials.master }), HalError)
  t.equal(statSync(join(dataDir, 'enclave', 'credentials.json')).mode & 0o777, 0o600)
  await hal.enclave.provision(await signAttestation(hal.enclave.attestation(), devCa))
  await hal.close()

  const again = await openHal({ variant: 'P', dataDir, firmware })
  t.same(again.enclave.credentials(), credentials)
  const kept = {
    devid: again.devid,
    log: again.enclave.logSigner.publicKey,
    eid: again.enclave.identityPublicKey,
    attestation: again.enclave.attestationPublicKey(),
    provisioning: again.enclave.provisioning(),
    tls: again.enclave.tlsCredentials(),
  }
  await again.enclave.wipe()
  t.equal(again.enclave.credentials(), undefined)
  await again.enclave.wipe()
  await again.close()

  const wiped = await open(t, dataDir)
  t.equal(wiped.enclave.credentials(), undefined)
  t.same(
    {
      devid: wiped.devid,
      log: wiped.enclave.logSigner.publicKey,
      eid: wiped.enclave.identityPublicKey,
      attestation: wiped.enclave.attestationPublicKey(),
      provisioning: wiped.enclave.provisioning(),
      tls: wiped.enclave.tlsCredentials(),
    },
    kept,
    'identity, log key, attestation, provisioning and the own TLS pair survive',
  )
})

t.test('a corrupt credentials file is reported', async (t) => {
  const dataDir = t.testdir()
  await (await openHal({ variant: 'P', dataDir, firmware })).close()
  await writeFile(join(dataDir, 'enclave', 'credentials.json'), '{"user": "AAAA", "master": "AAAA"}')
  await t.rejects(openHal({ variant: 'P', dataDir, firmware }), {
    name: 'HalCorruptError',
    message: /credentials\.json/,
  })
})
