import { X509Certificate, createPrivateKey, generateKeyPairSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../cli/hem-factory/factory-cli.js'
import { verifyProvisioning } from '../actors/auth/verify-provisioning.js'
import { openHal, type Hal, type OpenHalOptions, type SignedComponent } from '../hal/index.js'
import { toPem } from '../hal/x509/pem.js'
import { b64 } from './helpers/base64.js'
import { makeCa, type TestCa } from './helpers/x509-fixtures.js'
import { runCli } from './helpers/cli-output.js'

const firmware: SignedComponent = { version: '2.0.0', publicKey: new Uint8Array(32), signature: new Uint8Array(64) }
type TestContext = { teardown(fn: () => unknown): void; testdir(): string }

const run = (...argv: string[]) => runCli(main, argv)

async function device(t: TestContext, options: Partial<OpenHalOptions> = {}): Promise<Hal> {
  const hal = await openHal({ variant: 'P', dataDir: t.testdir(), firmware, ...options })
  t.teardown(() => hal.close())
  return hal
}

function contextOf(hal: Hal) {
  return {
    attestationPublicKey: hal.enclave.attestationPublicKey(),
    factoryRoot: hal.enclave.factoryRoot(),
    genuineId: hal.enclave.genuineId as string,
    devid: hal.devid,
    now: Date.now(),
  }
}

async function caFiles(t: TestContext, ca: TestCa): Promise<string[]> {
  const dir = t.testdir()
  await writeFile(join(dir, 'ca.key.pem'), ca.key.export({ type: 'pkcs8', format: 'pem' }))
  await writeFile(join(dir, 'ca.crt.pem'), toPem('CERTIFICATE', ca.cert))
  return ['--ca-key', join(dir, 'ca.key.pem'), '--ca-cert', join(dir, 'ca.crt.pem')]
}

t.test('usage', async (t) => {
  const help = await run('--help')
  t.match(help, { code: 0, stdout: /Usage: hem-factory COMMAND[\s\S]*sign[\s\S]*provision/ })
  t.match(await run(), { code: 2, stderr: /no command given/ })
  t.match(await run('forge'), { code: 2, stderr: /unknown command 'forge'/ })
  t.match(await run('sign', '--help'), { code: 0, stdout: /Usage: hem-factory sign --csr B64 --genuine B64/ })
  t.match(await run('provision', '-h'), { code: 0, stdout: /Usage: hem-factory provision --url URL/ })
  t.match(await run('sign', '--csr', 'AAAA'), { code: 2, stderr: /--csr and --genuine are required/ })
  t.match(await run('sign', '--csr', 'AAAA', '--genuine', 'not base64!'), { code: 2 })
  t.match(await run('sign', '--frobnicate'), { code: 2, stderr: /Unknown option '--frobnicate'/ })
  t.match(await run('provision'), { code: 2, stderr: /--url is required/ })
  t.match(await run('provision', '--url', 'nowhere'), { code: 2, stderr: /is not a URL/ })
  t.match(await run('provision', '--url', 'ftp://127.0.0.1/'), { code: 2, stderr: /http:\/\/ or https:\/\// })
})

t.test('sign with the development CA: attestation -> sign -> verifyProvisioning -> provision', async (t) => {
  const hal = await device(t)
  const { csr, genuine } = hal.enclave.attestation()
  const result = await run('sign', '--csr', b64(csr), '--genuine', Buffer.from(genuine).toString('base64url'))
  t.match(result, { code: 0, stderr: '' })
  const body = JSON.parse(result.stdout) as { crt: string; genuine: string }
  t.same(Object.keys(body), ['crt', 'genuine'])
  const record = {
    crt: new Uint8Array(Buffer.from(body.crt, 'base64')),
    genuine: new Uint8Array(Buffer.from(body.genuine, 'base64')),
  }
  t.same(verifyProvisioning(record, contextOf(hal)), { ok: true })
  await hal.enclave.provision(record)
  t.same(hal.enclave.provisioning(), record)
})

t.test('sign with another CA given by files', async (t) => {
  const ca = await makeCa('Line 7 Factory')
  const hal = await device(t, { factoryRoot: ca.cert })
  const { csr, genuine } = hal.enclave.attestation()
  const result = await run('sign', '--csr', b64(csr), '--genuine', b64(genuine), ...(await caFiles(t, ca)))
  t.equal(result.code, 0)
  const body = JSON.parse(result.stdout) as { crt: string; genuine: string }
  const record = {
    crt: new Uint8Array(Buffer.from(body.crt, 'base64')),
    genuine: new Uint8Array(Buffer.from(body.genuine, 'base64')),
  }
  t.same(verifyProvisioning(record, contextOf(hal)), { ok: true })
  t.equal(new X509Certificate(Buffer.from(record.crt)).issuer, 'CN=Line 7 Factory')
})

t.test('sign refuses a bad request or an unusable CA with exit 1', async (t) => {
  const hal = await device(t)
  const other = await device(t)
  const { csr, genuine } = hal.enclave.attestation()
  const args = ['sign', '--csr', b64(csr)]
  t.match(await run(...args, '--genuine', b64(other.enclave.attestation().genuine)), {
    code: 1,
    stdout: '',
    stderr: /not signed by the CSR's key/,
  })
  const tampered = Uint8Array.from(csr)
  tampered[tampered.length - 3]! ^= 1
  t.match(await run('sign', '--csr', b64(tampered), '--genuine', b64(genuine)), {
    code: 1,
    stderr: /CSR signature does not verify/,
  })

  const dir = t.testdir()
  const ok = await caFiles(t, await makeCa('Good'))
  const caKey = ok[1] as string
  const caCert = ok[3] as string
  const at = (name: string) => join(dir, name)
  t.match(await run(...args, '--genuine', b64(genuine), '--ca-key', at('missing.pem'), '--ca-cert', caCert), {
    code: 1,
    stderr: /cannot read the CA key/,
  })
  t.match(await run(...args, '--genuine', b64(genuine), '--ca-key', caKey, '--ca-cert', at('missing.pem')), {
    code: 1,
    stderr: /cannot read the CA certificate/,
  })
  await writeFile(at('garbage.pem'), 'garbage')
  t.match(await run(...args, '--genuine', b64(genuine), '--ca-key', at('garbage.pem'), '--ca-cert', caCert), {
    code: 1,
    stderr: /not an unencrypted PEM private key/,
  })
  t.match(await run(...args, '--genuine', b64(genuine), '--ca-key', caKey, '--ca-cert', at('garbage.pem')), {
    code: 1,
    stderr: /is not a PEM certificate/,
  })
  await writeFile(
    at('other.pem'),
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
  )
  t.match(await run(...args, '--genuine', b64(genuine), '--ca-key', at('other.pem'), '--ca-cert', caCert), {
    code: 1,
    stderr: /does not belong to the certificate/,
  })
  await writeFile(at('ed.pem'), generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }))
  t.match(await run(...args, '--genuine', b64(genuine), '--ca-key', at('ed.pem'), '--ca-cert', caCert), {
    code: 1,
    stderr: /not an ECDSA P-256 key/,
  })
})

/** A stand-in for the device's attestation and provisioning endpoints, over HTTPS with its own certificate. */
async function fakeDevice(
  t: TestContext,
  hal: Hal,
  options: { https?: boolean; postStatus?: number } = {},
): Promise<string> {
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const reply = (status: number, body: unknown) => {
      const text = JSON.stringify(body)
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) })
      res.end(text)
    }
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const { enclave } = hal
      if (req.method === 'GET' && req.url === '/api/system/config/attestation') {
        const record = enclave.provisioning()
        if (record) return reply(200, { crt: b64(record.crt), genuine: b64(record.genuine) })
        const { csr, genuine } = enclave.attestation()
        return reply(200, { csr: b64(csr), genuine: b64(genuine) })
      }
      if (req.method === 'POST' && req.url === '/api/system/config/provisioning') {
        if (options.postStatus)
          return reply(options.postStatus, {
            error: 'device_personalised',
            message: 'A personalised device cannot be provisioned',
          })
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { crt: string; genuine: string }
        const record = {
          crt: new Uint8Array(Buffer.from(body.crt, 'base64')),
          genuine: new Uint8Array(Buffer.from(body.genuine, 'base64')),
        }
        const verdict = verifyProvisioning(record, contextOf(hal))
        if (!verdict.ok) return reply(verdict.status, { error: verdict.code, message: verdict.message })
        return void enclave.provision(record).then(() => reply(200, {}))
      }
      reply(404, { error: 'not_found', message: 'no such route' })
    })
  }
  const { certFile, keyFile } = hal.enclave.tlsCredentials()
  const server: Server =
    options.https === false
      ? createHttpServer(handler)
      : createHttpsServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  const { port } = server.address() as { port: number }
  return `${options.https === false ? 'http' : 'https'}://127.0.0.1:${port}`
}

t.test('provision: the whole flow against a device over HTTPS', async (t) => {
  const hal = await device(t)
  const url = await fakeDevice(t, hal)
  const result = await run('provision', '--url', url)
  t.same(result, {
    code: 0,
    stdout: `provisioned ${hal.enclave.genuineId} (devid ${hal.devid}) at ${url}\n`,
    stderr: '',
  })
  t.ok(hal.enclave.provisioning(), 'the device stored the record')
  t.match(await run('provision', '--url', url), {
    code: 1,
    stderr: 'hem-factory provision: the device is already provisioned\n',
  })
})

t.test('provision: refusals and unreachable devices exit 1', async (t) => {
  const hal = await device(t)
  t.match(await run('provision', '--url', await fakeDevice(t, hal, { https: false, postStatus: 403 })), {
    code: 1,
    stderr: 'hem-factory provision: POST provisioning answered 403: A personalised device cannot be provisioned\n',
  })
  const otherCa = await device(t, { factoryRoot: (await makeCa('Elsewhere')).cert })
  t.match(await run('provision', '--url', await fakeDevice(t, otherCa)), {
    code: 1,
    stderr: /answered 406: the certificate is not issued by the factory root/,
  })
  t.equal(otherCa.enclave.provisioning(), undefined)

  const silent = createHttpServer((_req, res) => res.writeHead(500).end('oops'))
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const { port } = silent.address() as { port: number }
  t.match(await run('provision', '--url', `http://127.0.0.1:${port}`), {
    code: 1,
    stderr: 'hem-factory provision: GET attestation answered 500\n',
  })
  await new Promise((resolve) => silent.close(resolve))
  t.match(await run('provision', '--url', `http://127.0.0.1:${port}`), {
    code: 1,
    stderr: /GET http:\/\/127\.0\.0\.1:\d+\/api\/system\/config\/attestation: .*ECONNREFUSED/,
  })

  const empty = createHttpServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'))
  await new Promise<void>((resolve) => empty.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => empty.close(resolve)))
  t.match(await run('provision', '--url', `http://127.0.0.1:${(empty.address() as { port: number }).port}`), {
    code: 1,
    stderr: /without base64 `csr` and `genuine`/,
  })
})

t.test('the development CA files are a pair the HAL trusts', async (t) => {
  const key = createPrivateKey(readFileSync(new URL('../deploy/keys/factory-ca-dev.key.pem', import.meta.url)))
  const cert = new X509Certificate(readFileSync(new URL('../deploy/keys/factory-ca-dev.crt.pem', import.meta.url)))
  t.ok(cert.checkPrivateKey(key))
  t.ok(cert.ca)
  t.equal(cert.subject, 'CN=HEM Development Factory CA\nO=hemd development')
  const hal = await device(t)
  t.same(hal.enclave.factoryRoot(), new Uint8Array(cert.raw))
})
