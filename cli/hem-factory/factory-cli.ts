// hem-factory: a development stand-in for the factory CA that provisions P enclaves. A thin
// shell over sign-attestation.ts: parse arguments, load the CA, talk to the device, print.

import { X509Certificate, createPrivateKey } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { commandsUsage, parseOptions, runCommandLine, UsageError, type CliIo, type CommandLine } from '../index.js'
import type { AttestationRequest } from '../../hal/index.js'
import { DEADLINE_MS, decodeBase64 } from '../../protocol/index.js'
import { AttestationRejectedError, signAttestation, type FactoryCa } from '../../factory/index.js'

/** The CA, the request or the device said no: exit code 1. */
class FactoryError extends Error {}

const CA_OPTIONS =
  "  --ca-key FILE    the CA's PEM private key, ECDSA P-256 " +
  `(default deploy/keys/factory-ca-dev.key.pem)
  --ca-cert FILE   the CA's PEM certificate (default deploy/keys/factory-ca-dev.crt.pem)
  -h, --help       show this help`

const SIGN_USAGE = `Usage: hem-factory sign --csr B64 --genuine B64 [--ca-key FILE --ca-cert FILE]

Signs a P device's attestation request (GET /api/system/config/attestation before provisioning)
as the factory CA: checks the CSR's self-signature and the device's self-statement, then prints
{"crt", "genuine"}, the body for POST /api/system/config/provisioning.

  --csr B64        the request's \`csr\` (base64 DER PKCS#10)
  --genuine B64    the request's \`genuine\` (the device's self-statement, base64)
${CA_OPTIONS}

Exit status: 0 signed, 1 request rejected or CA unusable, 2 usage error.
`

const PROVISION_USAGE = `Usage: hem-factory provision --url URL [--ca-key FILE --ca-cert FILE]

Provisions a fresh P device: GET URL/api/system/config/attestation, sign it as \`sign\` does,
POST the result to URL/api/system/config/provisioning. URL is http:// or https://; the device's
TLS certificate is not checked (before provisioning nothing can vouch for it).

  --url URL        the device, e.g. https://127.0.0.1:8443
${CA_OPTIONS}

Exit status: 0 provisioned, 1 the device or the CA refused, 2 usage error.
`

const commands = {
  sign: { summary: 'sign an attestation request (csr, genuine) as the factory CA', usage: SIGN_USAGE, run: runSign },
  provision: {
    summary: 'fetch, sign and post back the attestation of a device',
    usage: PROVISION_USAGE,
    run: runProvision,
  },
}

const cli: CommandLine = {
  program: 'hem-factory',
  usage: commandsUsage('hem-factory', 'COMMAND [OPTIONS]', commands),
  commands,
  failure: (err) => (err instanceof FactoryError || err instanceof AttestationRejectedError ? err.message : undefined),
}

export function main(argv: string[], io: CliIo): Promise<number> {
  return runCommandLine(cli, argv, io)
}

const caOptions = {
  'ca-key': { type: 'string' },
  'ca-cert': { type: 'string' },
} as const

async function runSign(args: string[], io: CliIo): Promise<number> {
  const { values } = parseOptions({
    args,
    options: { ...caOptions, csr: { type: 'string' }, genuine: { type: 'string' } },
  })
  const csr = values.csr === undefined ? undefined : decodeBase64(values.csr)
  const genuine = values.genuine === undefined ? undefined : decodeBase64(values.genuine)
  if (!csr || !genuine) throw new UsageError('--csr and --genuine are required, both base64')
  const record = await signAttestation({ csr, genuine }, await loadFactoryCa(values['ca-key'], values['ca-cert']))
  io.stdout.write(`${JSON.stringify({ crt: b64(record.crt), genuine: b64(record.genuine) })}\n`)
  return 0
}

async function runProvision(args: string[], io: CliIo): Promise<number> {
  const { values } = parseOptions({ args, options: { ...caOptions, url: { type: 'string' } } })
  const base = deviceUrl(values.url)
  const ca = await loadFactoryCa(values['ca-key'], values['ca-cert'])
  const attestation = await requestJson('GET', new URL('/api/system/config/attestation', base))
  const request = attestationRequest(attestation)
  const record = await signAttestation(request, ca)
  const answer = await requestJson('POST', new URL('/api/system/config/provisioning', base), {
    crt: b64(record.crt),
    genuine: b64(record.genuine),
  })
  if (answer.status !== 200) throw new FactoryError(`POST provisioning answered ${describe(answer)}`)
  io.stdout.write(`provisioned ${record.genuineId} (devid ${record.devid}) at ${base.origin}\n`)
  return 0
}

function attestationRequest(answer: JsonAnswer): AttestationRequest {
  if (answer.status !== 200) throw new FactoryError(`GET attestation answered ${describe(answer)}`)
  const body = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as Record<string, unknown>
  if (typeof body.crt === 'string') throw new FactoryError('the device is already provisioned')
  const csr = typeof body.csr === 'string' ? decodeBase64(body.csr) : undefined
  const genuine = typeof body.genuine === 'string' ? decodeBase64(body.genuine) : undefined
  if (!csr || !genuine) throw new FactoryError('GET attestation answered without base64 `csr` and `genuine`')
  return { csr, genuine }
}

function deviceUrl(text: string | undefined): URL {
  if (text === undefined) throw new UsageError('--url is required')
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`--url ${text} is not a URL`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError('--url must be http:// or https://')
  return url
}

async function loadFactoryCa(
  keyFile = defaultCaFile('factory-ca-dev.key.pem'),
  certFile = defaultCaFile('factory-ca-dev.crt.pem'),
): Promise<FactoryCa> {
  const read = (path: string, what: string) =>
    readFile(path, 'utf8').catch(() => {
      throw new FactoryError(`cannot read the CA ${what} ${path}`)
    })
  const [keyPem, certPem] = [await read(keyFile, 'key'), await read(certFile, 'certificate')]
  let key
  try {
    key = createPrivateKey(keyPem)
  } catch {
    // The parser's message could quote the key file; keep only the verdict.
    throw new FactoryError(`${keyFile} is not an unencrypted PEM private key`)
  }
  let cert: X509Certificate
  try {
    cert = new X509Certificate(certPem)
  } catch {
    throw new FactoryError(`${certFile} is not a PEM certificate`)
  }
  if (key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new FactoryError(`${keyFile} is not an ECDSA P-256 key`)
  if (!cert.checkPrivateKey(key))
    throw new FactoryError(`the key in ${keyFile} does not belong to the certificate in ${certFile}`)
  return { key, cert: new Uint8Array(cert.raw) }
}

// The development CA sits in deploy/keys/ of the package: two levels above this file in the
// source tree, three in dist/.
function defaultCaFile(name: string): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
    const path = join(dir, 'deploy', 'keys', name)
    if (existsSync(path)) return path
  }
  return join('deploy', 'keys', name)
}

interface JsonAnswer {
  status: number
  body: unknown
}

/** Beyond the device's own deadline for attestation and provisioning, so that a slow device answers 504 itself. */
const TIMEOUT_MS = DEADLINE_MS.short + 10_000

function requestJson(method: 'GET' | 'POST', url: URL, body?: unknown): Promise<JsonAnswer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
  const options = {
    method,
    timeout: TIMEOUT_MS,
    headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {},
  }
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: parseJson(Buffer.concat(chunks).toString('utf8')) }),
      )
    }
    const req =
      url.protocol === 'https:'
        ? httpsRequest(url, { ...options, rejectUnauthorized: false }, onResponse)
        : httpRequest(url, options, onResponse)
    req.on('timeout', () => req.destroy(new FactoryError(`${url.origin} did not answer within ${TIMEOUT_MS / 1000} s`)))
    req.on('error', (err) =>
      reject(err instanceof FactoryError ? err : new FactoryError(`${method} ${url.href}: ${err.message}`)),
    )
    req.end(payload)
  })
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function describe({ status, body }: JsonAnswer): string {
  const message = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).message : undefined
  return typeof message === 'string' ? `${status}: ${message}` : `${status}`
}

function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64')
}
