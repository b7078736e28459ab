// GET /api/system/tls: the chain the HTTPS listener serves, for a page that cannot read its TLS session's
// certificate. Public over HTTP and HTTPS, before personalisation; exactly the certificate a handshake shows.
import { createHash, generateKeyPairSync, X509Certificate } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { toPem } from '../hal/x509/pem.js'
import { bootDevice } from './helpers/device.js'
import { servedCertificate } from './helpers/device-tls.js'
import { call } from './helpers/http.js'
import { issue, makeCa, makeIntermediate } from './helpers/x509-fixtures.js'

const sha256 = (der: Uint8Array) => createHash('sha256').update(der).digest('hex')

t.test("a fresh device's own certificate, over both ports, as the handshake shows it", async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E' })
  const served = await servedCertificate(device.httpsUrl!)
  for (const base of [device.httpUrl!, device.httpsUrl!]) {
    const answer = await call(`${base}/api/system/tls`)
    t.equal(answer.status, 200, `${base}: no token needed, not personalised`)
    t.same(Object.keys(answer.json).sort(), ['chain', 'sha256'])
    t.equal(answer.json.chain.length, 1, 'self-signed: the leaf alone')
    t.ok(Buffer.from(answer.json.chain[0], 'base64').equals(served), 'the leaf the handshake shows')
    t.equal(answer.json.sha256, sha256(served), 'its SHA-256, hex')
  }
  t.same(device.tlsCertificate, new Uint8Array(served), "the device's face names it (hemd's banner line)")
})

t.test("an operator's chain: every certificate of the file, leaf first; none without HTTPS", async (t) => {
  const dir = t.testdir()
  const root = await makeCa('Served Root')
  const intermediate = await makeIntermediate(root, 'Served Intermediate')
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const leaf = await issue(intermediate, privateKey, 'hem.example', {
    altNames: [{ type: 'dns', value: 'hem.example' }],
  })
  const certFile = join(dir, 'chain.pem')
  const keyFile = join(dir, 'key.pem')
  writeFileSync(certFile, [leaf, intermediate.cert].map((der) => toPem('CERTIFICATE', der)).join(''))
  writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }))
  const device = await bootDevice(t, { dataDir: join(dir, 'data'), variant: 'E', tls: { certFile, keyFile } })
  const answer = await call(`${device.httpUrl!}/api/system/tls`)
  t.same(
    answer.json.chain.map((b64: string) => new X509Certificate(Buffer.from(b64, 'base64')).subject),
    ['CN=hem.example', 'CN=Served Intermediate'],
  )
  t.equal(answer.json.sha256, sha256(leaf))
  t.ok((await servedCertificate(device.httpsUrl!)).equals(Buffer.from(leaf)), 'the leaf served')

  const plain = await bootDevice(t, { dataDir: join(dir, 'plain'), variant: 'E', https: undefined })
  t.match(await call(`${plain.httpUrl!}/api/system/tls`), { status: 404, json: { error: 'no_https' } })
  t.equal(plain.tlsCertificate, undefined, 'no banner line either')
})
