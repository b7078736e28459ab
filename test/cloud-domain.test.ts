// hem-cloud's domain service (ext-auth contract §3.3): the predefined name's key wrapped for a real
// device, which imports it; certificates for custom prefixes from a CSR, verified against the CA.
import 'reflect-metadata'
import { Pkcs10CertificateRequest, SubjectAlternativeNameExtension, X509Certificate } from '@peculiar/x509'
import { generateKeyPairSync } from 'node:crypto'
import t from 'tap'
import { createCsr } from '../hal/x509/create-csr.js'
import { toPem } from '../hal/x509/pem.js'
import { signGenuine } from '../hal/index.js'
import { AUTHKEY, testCloud, ZONE, type TestCloud } from './helpers/cloud.js'
import { call, type Answer } from './helpers/http.js'
import { bearer, owned } from './helpers/owner.js'

const post = (url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
  call(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

/** A genuine statement naming `devid` (the cloud reads the devid; no factory CA is configured here). */
function genuineFor(
  devid: string,
  kind: 'device' | 'factory' = 'device',
  key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
): string {
  return Buffer.from(signGenuine({ kind, devid, genuineId: 'test', keyHash: new Uint8Array(32) }, key)).toString(
    'base64',
  )
}

function newCsr(commonName: string): Uint8Array {
  return createCsr({ privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, commonName })
}

/** The leaf of a `crt` (b64 leaf DER ‖ CA DER), with its issuer's certificate. */
function leafOf(crt: string, test: TestCloud): { leaf: X509Certificate; rest: Buffer } {
  const der = Buffer.from(crt, 'base64')
  const leaf = new X509Certificate(der.subarray(0, der.length - test.ca.cert.length))
  return { leaf, rest: der.subarray(der.length - test.ca.cert.length) }
}

t.test('predefined prefix: the shared key wrapped for the device, which imports it', async (t) => {
  const o = await owned(t)
  const test = await testCloud(t)
  const devid = o.device.devid
  const register = `${test.cloud.url}/domain/register/my/${AUTHKEY}`
  const body = { genuine: genuineFor(devid), ip: '192.168.7.1' }
  t.match(await post(register, body), { status: 409, json: { error: 'unknown_device' } }, 'check in first')

  const check = (await call(`${o.base}/api/system/checkin`)).json.check as string
  t.equal((await post(`${test.cloud.url}/checkin`, { check })).status, 200)
  const answer = await post(register, body)
  t.equal(answer.status, 200, answer.text)
  t.strictSame(Object.keys(answer.json).sort(), ['crt', 'emp', 'key'])
  const { leaf, rest } = leafOf(answer.json.crt, test)
  t.ok(rest.equals(Buffer.from(test.ca.cert)), 'the CA follows the leaf')
  t.match(leaf.getExtension(SubjectAlternativeNameExtension)?.names.toJSON(), [{ type: 'dns', value: `my.${ZONE}` }])

  const imported = await post(`${o.base}/api/system/config`, { tls: answer.json }, bearer(o.token))
  t.match(imported, { status: 200, json: { updated: true, reboot_required: true } }, 'the device decrypts and imports')

  const again = await post(register, body)
  t.equal(again.json.crt, answer.json.crt, 'one certificate for the name')
  t.not(again.json.emp, answer.json.emp, 'a fresh wrap each time')
  await test.restart()
  t.equal((await post(register, body)).json.crt, answer.json.crt, 'kept across a restart')
  t.match(await post(register, {}), { status: 400 }, 'a predefined prefix needs genuine')
  t.match(await post(register, { genuine: 'SEVNRw==' }), { status: 400, json: { error: 'bad_genuine' } })
  t.match(await post(`${test.cloud.url}/domain/register/my`, body), { status: 200 }, 'no authkey needed for it')
})

t.test('custom prefix: a certificate for the CSR, SAN prefix.zone and cname, 90 days, from the CA', async (t) => {
  const test = await testCloud(t)
  const base = test.cloud.url
  t.match(await call(`${base}/domain/predefs`), { status: 200, json: { prefix: ['my'] } })
  t.equal((await call(`${base}/domain/check/cctest1`)).status, 404, 'free')
  t.equal((await call(`${base}/domain/check/my`)).status, 200, 'predefined is taken')
  t.equal((await call(`${base}/domain/check/Bad_Prefix`)).status, 400)

  const csr = newCsr('cctest1')
  const register = `${base}/domain/register/cctest1/${AUTHKEY}`
  t.match(await post(`${base}/domain/register/cctest1/wrong-key`, { csr: toBase64(csr) }), { status: 401 })
  t.match(await post(`${base}/domain/register/bad.prefix/${AUTHKEY}`, { csr: toBase64(csr) }), { status: 400 })
  t.match(await post(register, { genuine: null, cname: 'hem.example.org' }), { status: 400 }, 'no CSR: 400')
  t.match(await post(register, { csr: 'bm90IGEgY3Ny' }), { status: 400, json: { error: 'bad_csr' } })

  const answer = await post(register, { csr: toBase64(csr), genuine: null, cname: 'hem.example.org' })
  t.equal(answer.status, 200, answer.text)
  t.match(answer.json, { status: 'done', crt: String, id: /^[0-9a-f]{64}$/ })
  const { leaf } = leafOf(answer.json.crt, test)
  const caCert = new X509Certificate(test.ca.cert)
  t.ok(await leaf.verify({ publicKey: caCert.publicKey, date: new Date(test.clock.ms) }), 'verifies against the CA')
  t.same(
    leaf.getExtension(SubjectAlternativeNameExtension)?.names.toJSON(),
    [
      { type: 'dns', value: `cctest1.${ZONE}` },
      { type: 'dns', value: 'hem.example.org' },
    ],
    'SAN: prefix.zone and the cname',
  )
  const csrKey = new Pkcs10CertificateRequest(csr).publicKey.rawData
  t.ok(Buffer.from(leaf.publicKey.rawData).equals(Buffer.from(csrKey)), "for the CSR's key")
  t.equal((leaf.notAfter.getTime() - leaf.notBefore.getTime()) / 1000, 90 * 86400 + 300, '90 days (+5 min of skew)')
  t.equal((await call(`${base}/domain/check/cctest1`)).status, 200, 'now taken')

  const poll = `${base}/domain/register/${answer.json.id}`
  t.match(await call(poll), { status: 200, json: { status: 'done', crt: answer.json.crt } }, 'the poll route')
  t.equal((await call(`${base}/domain/register/${'0'.repeat(64)}`)).status, 404)
  test.clock.ms += 86400 * 1000
  t.match(await call(poll), { status: 410, json: { reason: 'expired' } }, 'gone after 24 h')

  const pem = toPem('CERTIFICATE REQUEST', newCsr('cctest1'))
  t.equal((await post(register, { csr: pem })).status, 200, 'a PEM CSR; the same holder may renew')
})

t.test('custom prefix held by a device: another device gets 409, the holder renews without authkey', async (t) => {
  const test = await testCloud(t)
  const base = test.cloud.url
  const csr = toBase64(newCsr('held'))
  const mine = genuineFor('00112233445566aa')
  t.equal((await post(`${base}/domain/register/held/${AUTHKEY}`, { csr, genuine: mine })).status, 200)
  t.match(await post(`${base}/domain/register/held/${AUTHKEY}`, { csr, genuine: genuineFor('00112233445566bb') }), {
    status: 409,
    json: { error: 'taken' },
  })
  t.equal((await post(`${base}/domain/register/held`, { csr, genuine: mine })).status, 200, 'the holder, no authkey')
  t.equal((await post(`${base}/domain/register/other`, { csr, genuine: mine })).status, 401, 'a new one needs it')
})

t.test('with a factory CA: genuine must be the factory statement signed by it', async (t) => {
  const factory = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const test = await testCloud(t, {}, { factoryRoot: factory.publicKey })
  const register = `${test.cloud.url}/domain/register/fab1/${AUTHKEY}`
  const csr = toBase64(newCsr('fab1'))
  const devid = '0011223344556677'
  t.match(await post(register, { csr, genuine: genuineFor(devid, 'device', factory.privateKey) }), { status: 401 })
  t.match(await post(register, { csr, genuine: genuineFor(devid, 'factory') }), {
    status: 401,
    json: { error: 'not_genuine' },
  })
  t.equal((await post(register, { csr, genuine: genuineFor(devid, 'factory', factory.privateKey) })).status, 200)
  t.equal(
    (await post(`${test.cloud.url}/domain/register/fab2/${AUTHKEY}`, { csr, genuine: null })).status,
    200,
    'absent with a CSR (variant E)',
  )
})

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64')
}
