import 'reflect-metadata'
import { Pkcs10CertificateRequestGenerator } from '@peculiar/x509'
import { X509Certificate, createPrivateKey, generateKeyPairSync, webcrypto, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { decodeBase64 } from '../protocol/base64.js'
import { wrapTlsKey } from '../client/index.js'
import { signAttestation, type FactoryCa } from '../factory/sign-attestation.js'
import { splitDerChain } from '../actors/auth/split-der-chain.js'
import { decodeTlsImport } from '../actors/auth/tls-import.js'
import { verifyProvisioning, type ProvisioningContext } from '../actors/auth/verify-provisioning.js'
import { openHal, type Hal, type SignedComponent } from '../hal/index.js'
import { parseGenuine, signGenuine } from '../hal/x509/genuine-statement.js'
import { b64 } from './helpers/base64.js'
import { issue, makeCa, makeIntermediate, pkcs8 } from './helpers/x509-fixtures.js'

const firmware: SignedComponent = { version: '2.0.0', publicKey: new Uint8Array(32), signature: new Uint8Array(64) }
const devCa: FactoryCa = {
  key: createPrivateKey(readFileSync(new URL('../deploy/keys/factory-ca-dev.key.pem', import.meta.url), 'utf8')),
  cert: new Uint8Array(
    new X509Certificate(readFileSync(new URL('../deploy/keys/factory-ca-dev.crt.pem', import.meta.url))).raw,
  ),
}

async function device(
  t: { teardown(fn: () => unknown): void; testdir(): string },
  variant: 'P' | 'E' = 'P',
): Promise<Hal> {
  const hal = await openHal({ variant, dataDir: t.testdir(), firmware })
  t.teardown(() => hal.close())
  return hal
}

function contextOf(hal: Hal, now: number | undefined = Date.now()): ProvisioningContext {
  return {
    attestationPublicKey: hal.enclave.attestationPublicKey(),
    factoryRoot: hal.enclave.factoryRoot(),
    genuineId: hal.enclave.genuineId as string,
    devid: hal.devid,
    ...(now === undefined ? {} : { now }),
  }
}

t.test('verifyProvisioning', async (t) => {
  const hal = await device(t)
  const context = contextOf(hal)
  const good = await signAttestation(hal.enclave.attestation(), devCa)
  const refusal = (code: string, status = 406) => ({ ok: false, code, status })

  t.same(verifyProvisioning(good, context), { ok: true }, 'good')

  const wrongCa = await signAttestation(hal.enclave.attestation(), await makeCa('Another Factory'))
  t.match(verifyProvisioning(wrongCa, context), refusal('bad_signature'), 'wrong CA')
  t.match(verifyProvisioning(wrongCa, { ...context, factoryRoot: devCa.cert }), refusal('bad_signature'))
  t.match(
    verifyProvisioning({ crt: good.crt, genuine: wrongCa.genuine }, context),
    refusal('bad_genuine'),
    'genuine by another CA',
  )

  const other = await device(t)
  const forOther = await signAttestation(other.enclave.attestation(), devCa)
  t.match(verifyProvisioning(forOther, context), refusal('key_mismatch'), 'a certificate of another enclave key')
  t.match(
    verifyProvisioning({ crt: good.crt, genuine: forOther.genuine }, context),
    refusal('bad_genuine'),
    'genuine of another device',
  )

  const oldCa = await makeCa('Old Factory', {
    notBefore: new Date('2000-01-01T00:00:00Z'),
    notAfter: new Date('2001-01-01T00:00:00Z'),
  })
  const expired = await signAttestation(hal.enclave.attestation(), oldCa, Date.parse('2000-06-01T00:00:00Z'))
  const oldContext = { ...context, factoryRoot: oldCa.cert }
  t.match(
    verifyProvisioning(expired, oldContext),
    { ...refusal('bad_signature'), message: /valid from .* to .* only/ },
    'expired',
  )
  t.same(
    verifyProvisioning(expired, { ...oldContext, now: undefined }),
    { ok: true },
    'no validity check while the clock is not set',
  )
  t.match(
    verifyProvisioning(good, { ...context, now: Date.parse('2000-01-01T00:00:00Z') }),
    refusal('bad_signature'),
    'not yet valid',
  )

  const tampered = Uint8Array.from(good.genuine)
  tampered[tampered.length - 1]! ^= 1
  t.match(verifyProvisioning({ crt: good.crt, genuine: tampered }, context), refusal('bad_genuine'), 'tampered genuine')
  const self = hal.enclave.attestation().genuine
  t.match(
    verifyProvisioning({ crt: good.crt, genuine: self }, context),
    refusal('bad_genuine'),
    'the device self-statement',
  )
  const statement = parseGenuine(good.genuine)!
  const otherId = signGenuine({ ...statement, genuineId: 'SIM-0000000000000000' }, devCa.key)
  t.match(verifyProvisioning({ crt: good.crt, genuine: otherId }, context), refusal('bad_genuine'), 'another genuineId')

  const garbage = new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01])
  t.match(
    verifyProvisioning({ crt: garbage, genuine: good.genuine }, context),
    refusal('malformed', 400),
    'garbage crt',
  )
  t.match(
    verifyProvisioning({ crt: good.crt, genuine: garbage }, context),
    refusal('malformed', 400),
    'garbage genuine',
  )
  t.match(
    verifyProvisioning({ crt: Buffer.concat([good.crt, Uint8Array.of(0)]), genuine: good.genuine }, context),
    refusal('malformed', 400),
  )
})

t.test('parseGenuine refuses what is not a statement', async (t) => {
  const hal = await device(t)
  const genuine = hal.enclave.attestation().genuine
  t.ok(parseGenuine(genuine))
  t.equal(parseGenuine(genuine.subarray(0, 10)), undefined, 'too short')
  t.equal(parseGenuine(Buffer.concat([Buffer.from('XXXX'), genuine.subarray(4)])), undefined, 'wrong magic')
  const kind = Uint8Array.from(genuine)
  kind[5] = 9
  t.equal(parseGenuine(kind), undefined, 'unknown kind')
  const version = Uint8Array.from(genuine)
  version[4] = 2
  t.equal(parseGenuine(version), undefined, 'unknown version')
  t.equal(parseGenuine(genuine.subarray(0, 15 + (genuine[14] ?? 0) + 32)), undefined, 'no signature')
  const badId = Uint8Array.from(genuine)
  badId[15] = 0x20
  t.equal(parseGenuine(badId), undefined, 'a space in the genuine id')
  const statement = parseGenuine(genuine)!
  t.throws(() => signGenuine({ ...statement, devid: 'xyz' }, devCa.key), RangeError)
  t.throws(() => signGenuine({ ...statement, genuineId: '' }, devCa.key), RangeError)
  t.throws(() => signGenuine({ ...statement, keyHash: new Uint8Array(31) }, devCa.key), RangeError)
})

t.test('signAttestation refuses a request that does not check out', async (t) => {
  const hal = await device(t)
  const other = await device(t)
  const request = hal.enclave.attestation()
  const csr = Uint8Array.from(request.csr)
  csr[csr.length - 5]! ^= 1
  await t.rejects(signAttestation({ ...request, csr }, devCa), {
    name: 'AttestationRejectedError',
    message: 'the CSR signature does not verify',
  })
  await t.rejects(signAttestation({ ...request, csr: new Uint8Array([1, 2, 3]) }, devCa), {
    message: '`csr` is not a DER PKCS#10 request',
  })
  await t.rejects(signAttestation({ ...request, genuine: other.enclave.attestation().genuine }, devCa), {
    message: /not signed by the CSR's key/,
  })
  await t.rejects(signAttestation({ ...request, genuine: new Uint8Array(40) }, devCa), {
    message: /not a device self-statement/,
  })
  const alg = {
    name: 'RSASSA-PKCS1-v1_5',
    hash: 'SHA-256',
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
  }
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])
  const rsaCsr = await Pkcs10CertificateRequestGenerator.create({ name: 'CN=rsa', keys, signingAlgorithm: alg })
  await t.rejects(signAttestation({ ...request, csr: new Uint8Array(rsaCsr.rawData) }, devCa), {
    message: 'the attestation key is not ECDSA P-256',
  })
})

t.test('the signed device certificate', async (t) => {
  const hal = await device(t)
  const now = Date.now()
  const signed = await signAttestation(hal.enclave.attestation(), devCa, now)
  const crt = new X509Certificate(Buffer.from(signed.crt))
  const ca = new X509Certificate(Buffer.from(devCa.cert))
  t.equal(crt.subject, `CN=${hal.enclave.genuineId}`)
  t.ok(crt.checkIssued(ca) && crt.verify(ca.publicKey))
  t.notOk(crt.ca)
  t.equal(crt.validTo, ca.validTo, 'valid as long as the CA')
  t.equal(Date.parse(crt.validFrom), Math.floor(now / 1000) * 1000)
  t.match(crt.serialNumber, /^[4-7][0-9A-F]{31}$/)
  t.match(signed, { genuineId: hal.enclave.genuineId, devid: hal.devid })
})

t.test('decodeTlsImport', async (t) => {
  const hal = await device(t)
  const root = await makeCa('TLS Root')
  const intermediate = await makeIntermediate(root, 'TLS Intermediate')
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const chain = [await issue(intermediate, privateKey, 'device.example'), intermediate.cert]
  const crt = b64(Buffer.concat(chain))
  const eid = hal.enclave.identityPublicKey
  const sealed = wrapTlsKey(pkcs8(privateKey), eid)
  const decode = (value: unknown) => decodeTlsImport(value, hal.enclave)
  const failure = (code: string, status: number) => ({ ok: false, code, status })

  t.same(
    decode({ crt, ...sealed }),
    { ok: true, material: { certChainDer: chain, keyPkcs8: pkcs8(privateKey) } },
    'round trip',
  )
  const material = decode({ crt, ...sealed })
  if (material.ok) await hal.enclave.stageTls(material.material)
  t.ok(material.ok, 'the enclave stages what it decoded')

  const urlSafe = {
    crt: Buffer.concat(chain).toString('base64url'),
    emp: sealed.emp.replace(/=+$/, ''),
    key: sealed.key,
  }
  t.equal(decode(urlSafe).ok, true, 'url-safe, unpadded base64')

  const [iv = '', ciphertext = ''] = sealed.key.split('.')
  const bytes = Buffer.from(ciphertext, 'base64')
  const otherEmp = wrapTlsKey(pkcs8(privateKey), eid).emp
  t.match(decode({ crt, emp: otherEmp, key: sealed.key }), failure('undecryptable', 406), 'wrong emp')
  const lastBlock = Buffer.from(bytes)
  lastBlock[lastBlock.length - 1]! ^= 0xff
  t.match(
    decode({ crt, emp: sealed.emp, key: `${iv}.${lastBlock.toString('base64')}` }),
    failure('undecryptable', 406),
    'bad padding',
  )
  const otherDevice = await device(t)
  t.match(
    decodeTlsImport({ crt, ...sealed }, otherDevice.enclave),
    failure('undecryptable', 406),
    'sealed for another device',
  )
  t.match(
    decode({ crt, emp: sealed.emp, key: `${iv}.${bytes.subarray(0, bytes.length - 1).toString('base64')}` }),
    failure('malformed', 400),
    'truncated',
  )
  t.match(
    decode({ crt, emp: sealed.emp, key: `${iv}.${bytes.subarray(0, 16).toString('base64')}` }),
    failure('undecryptable', 406),
    'cut to a block',
  )
  t.match(
    decode({ crt, emp: sealed.emp, key: `${b64(new Uint8Array(8))}.${ciphertext}` }),
    failure('malformed', 400),
    'short IV',
  )
  t.match(decode({ crt, emp: sealed.emp, key: `${iv}.` }), failure('malformed', 400), 'no ciphertext')
  t.match(decode({ crt, emp: sealed.emp, key: `${iv}.${ciphertext}.x` }), failure('malformed', 400), 'three parts')
  t.match(decode({ crt, emp: sealed.emp, key: ciphertext }), failure('malformed', 400), 'no IV')
  t.match(decode({ crt, emp: sealed.emp, key: 42 }), failure('malformed', 400), 'key not a string')
  t.match(decode({ crt, key: sealed.key }), failure('malformed', 400), 'key without emp')
  t.match(decode({ crt, emp: b64(new Uint8Array(31)), key: sealed.key }), failure('malformed', 400), 'short emp')
  t.match(decode({ crt, emp: b64(new Uint8Array(32)), key: sealed.key }), failure('malformed', 400), 'small-order emp')
  t.match(decode({ crt, emp: `${sealed.emp}!`, key: sealed.key }), failure('malformed', 400), 'bad base64 emp')

  t.match(decode({ crt: 'not base64!', ...sealed }), failure('malformed', 400), 'bad base64 crt')
  t.match(decode({ ...sealed }), failure('malformed', 400), 'no crt')
  t.match(
    decode({ crt: b64(Buffer.concat([...chain, Uint8Array.of(0x30)])), ...sealed }),
    failure('malformed', 400),
    'a torn certificate',
  )
  t.match(
    decode({ crt: b64(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01])), ...sealed }),
    failure('malformed', 400),
    'not a certificate',
  )
  t.match(decode('{"crt": "..."}'), failure('malformed', 400), 'a string, not an object')
  t.match(decode(null), failure('malformed', 400))
  t.match(decode([crt]), failure('malformed', 400))

  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
  t.match(
    decode({ crt, ...wrapTlsKey(pkcs8(other), eid) }),
    failure('key_mismatch', 406),
    'a key the leaf does not certify',
  )
  t.match(
    decode({ crt: b64(Buffer.concat([chain[1]!, chain[0]!])), ...sealed }),
    failure('bad_chain', 406),
    'chain out of order',
  )
  const ed25519 = generateKeyPairSync('ed25519').privateKey
  const edChain = b64(await issue(intermediate, ed25519, 'ed.example'))
  t.match(decode({ crt: edChain, ...wrapTlsKey(pkcs8(ed25519), eid) }), failure('unsupported_key', 406), 'Ed25519')
  const notPkcs8 = wrapTlsKey(Buffer.from('not a key at all, just text'), eid)
  t.match(decode({ crt, ...notPkcs8 }), failure('undecryptable', 406), 'decrypts to something that is not PKCS#8')
})

t.test('decodeTlsImport without a key: a chain for the own TLS key', async (t) => {
  const hal = await device(t, 'E')
  const own = new X509Certificate(Buffer.from(hal.enclave.tlsCredentials().certDer)).publicKey
  const root = await makeCa('TLS Root')
  const leaf = await issue(root, own, 'device.example')
  t.same(decodeTlsImport({ crt: b64(leaf), emp: 'ignored' }, hal.enclave), {
    ok: true,
    material: { certChainDer: [leaf] },
  })
  const other: KeyObject = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey
  t.match(decodeTlsImport({ crt: b64(await issue(root, other, 'x')) }, hal.enclave), {
    ok: false,
    code: 'key_mismatch',
    status: 406,
  })
})

t.test('splitDerChain and decodeBase64', async (t) => {
  const long = new Uint8Array(300)
  long.set([0x30, 0x82, 0x01, 0x28])
  const short = Uint8Array.of(0x30, 0x01, 0x05)
  t.same(splitDerChain(Buffer.concat([long, short])), [long, short])
  t.equal(splitDerChain(new Uint8Array(0)), undefined, 'empty')
  t.equal(splitDerChain(Uint8Array.of(0x31, 0x00)), undefined, 'not a SEQUENCE')
  t.equal(splitDerChain(Uint8Array.of(0x30)), undefined, 'no length')
  t.equal(splitDerChain(Uint8Array.of(0x30, 0x80, 0x00, 0x00)), undefined, 'indefinite length')
  t.equal(splitDerChain(Uint8Array.of(0x30, 0x85, 1, 1, 1, 1, 1)), undefined, 'a 5-byte length')
  t.equal(splitDerChain(Uint8Array.of(0x30, 0x82, 0x01)), undefined, 'length cut short')
  t.equal(splitDerChain(Uint8Array.of(0x30, 0x02, 0x05)), undefined, 'content cut short')

  t.same(decodeBase64('+/8='), Uint8Array.of(0xfb, 0xff))
  t.same(decodeBase64('-_8'), Uint8Array.of(0xfb, 0xff))
  t.equal(decodeBase64('+/9='), undefined, 'non-zero trailing bits')
  t.equal(decodeBase64('+/8=='), undefined, 'too much padding')
  t.equal(decodeBase64('A'), undefined)
  t.equal(decodeBase64('+/8 '), undefined)
})
