// hem-image: builds, signs and inspects upgrade images (image/header.ts has the format).

import { cp, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises'
import { createPrivateKey, createPublicKey } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { commandsUsage, parseOptions, runCommandLine, UsageError, type CliIo, type CommandLine } from '../index.js'
import {
  buildImage,
  checkImage,
  fileSource,
  FirmwareManifestError,
  HEADER_BYTES,
  ImageFormatError,
  type ImageKind,
  loadFirmware,
  packDirectory,
  parseHeader,
  signBuild,
} from '../../image/index.js'
import type { Variant } from '../../protocol/index.js'

const PACKAGE_TOP = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../..' : '../../..', import.meta.url))
const DEV_KEY = join(PACKAGE_TOP, 'deploy', 'keys', 'vendor-dev.pem')

const BUILD_USAGE = `Usage: hem-image build --kind fw|ui --out FILE [OPTIONS] DIR

Packs DIR into a signed image. For fw, DIR is a runtime build (dist/): it is copied and its
manifest signed again with --version, so the device shows that version after the upgrade.
For ui, DIR is the management app's web root.

  --kind fw|ui        firmware or management app
  --out FILE          where to write the image
  --version V         the image's version (fw: default the build's own; ui: required)
  --hardware P,E      the variants it runs on (default P,E; ui: P)
  --floor N           its anti-rollback level, 0 to 4294967295 (default 0)
  --key FILE          the vendor's Ed25519 private key, PEM (default $HEMD_VENDOR_KEY, else
                      the development key deploy/keys/vendor-dev.pem)
  -h, --help          show this help
`

const INSPECT_USAGE = `Usage: hem-image inspect [--key FILE | --vendor-key BASE64] [--json] FILE

Prints an image's header and checks it as a device would: signature, length, payload hash and
archive. Nothing in the header is to be believed unless the check passes.

  --key FILE          the vendor's key, PEM (private or public; default as for build)
  --vendor-key BASE64 the vendor's raw Ed25519 public key, as version.fwk shows it
  --json              print JSON
  -h, --help          show this help

Exit status: 0 the image verifies, 1 it does not, 2 usage error.
`

const commands = {
  build: { summary: 'pack and sign a firmware or management-app image', usage: BUILD_USAGE, run: runBuild },
  inspect: { summary: 'print and verify an image', usage: INSPECT_USAGE, run: runInspect },
}

const cli: CommandLine = {
  program: 'hem-image',
  usage: commandsUsage('hem-image', 'COMMAND [OPTIONS]', commands),
  commands,
  failure: (err) => (isExpected(err) ? err.message : undefined),
}

/** Bad input or files, said plainly; anything else is a bug and keeps its stack. */
function isExpected(err: unknown): err is Error {
  return (
    err instanceof ImageFormatError ||
    err instanceof FirmwareManifestError ||
    err instanceof RangeError ||
    typeof (err as NodeJS.ErrnoException).code === 'string'
  )
}

export function main(argv: string[], io: CliIo): Promise<number> {
  return runCommandLine(cli, argv, io)
}

async function runBuild(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions({
    args,
    allowPositionals: true,
    options: {
      kind: { type: 'string' },
      out: { type: 'string' },
      version: { type: 'string' },
      hardware: { type: 'string' },
      floor: { type: 'string', default: '0' },
      key: { type: 'string' },
    },
  })
  const kind = values.kind
  if (kind !== 'fw' && kind !== 'ui') throw new UsageError('--kind must be fw or ui')
  if (!values.out) throw new UsageError('--out FILE is needed')
  if (positionals.length !== 1) throw new UsageError('name exactly one directory')
  const hardware = parseHardware(values.hardware ?? (kind === 'ui' ? 'P' : 'P,E'))
  if (!/^\d{1,10}$/.test(values.floor) || Number(values.floor) > 0xffffffff)
    throw new UsageError('--floor must be an integer from 0 to 4294967295')
  const keyPem = await readFile(values.key ?? process.env.HEMD_VENDOR_KEY ?? DEV_KEY, 'utf8')
  const dir = positionals[0]!
  const { version, payload } =
    kind === 'fw' ? await packFirmware(dir, values.version, keyPem) : await packApp(dir, values.version)
  const image = buildImage({ kind, hardware, floor: Number(values.floor), version }, payload, keyPem)
  await writeFile(values.out, image, { mode: 0o644 })
  io.stdout.write(
    `${values.out}: ${kind} ${version} for ${hardware.join(',')}, floor ${values.floor}, ${image.length} bytes\n`,
  )
  return 0
}

async function packFirmware(
  dir: string,
  version: string | undefined,
  keyPem: string,
): Promise<{ version: string; payload: Buffer }> {
  // The bootloader's own check, before anything is packed: a build that does not verify is no firmware.
  const built = await loadFirmware(dir)
  if (version === undefined) return { version: built.version, payload: await packDirectory(dir) }
  const copy = await mkdtemp(join(tmpdir(), 'hem-image-'))
  try {
    await cp(dir, copy, { recursive: true })
    await signBuild(copy, version, keyPem)
    return { version, payload: await packDirectory(copy) }
  } finally {
    await rm(copy, { recursive: true, force: true })
  }
}

async function packApp(dir: string, version: string | undefined): Promise<{ version: string; payload: Buffer }> {
  if (version === undefined) throw new UsageError('a ui image needs --version')
  const payload = await packDirectory(dir)
  return { version, payload }
}

function parseHardware(text: string): Variant[] {
  const parts = text.split(',').map((part) => part.trim().toUpperCase())
  if (
    parts.length === 0 ||
    parts.some((part) => part !== 'P' && part !== 'E') ||
    new Set(parts).size !== parts.length
  ) {
    throw new UsageError('--hardware must be P, E or P,E')
  }
  return parts as Variant[]
}

async function runInspect(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions({
    args,
    allowPositionals: true,
    options: { key: { type: 'string' }, 'vendor-key': { type: 'string' }, json: { type: 'boolean' } },
  })
  if (positionals.length !== 1) throw new UsageError('name exactly one image file')
  if (values.key !== undefined && values['vendor-key'] !== undefined)
    throw new UsageError('give --key or --vendor-key, not both')
  const vendorKey =
    values['vendor-key'] !== undefined
      ? decodeVendorKey(values['vendor-key'])
      : await pemPublicKey(values.key ?? process.env.HEMD_VENDOR_KEY ?? DEV_KEY)
  const file = await open(positionals[0]!, 'r')
  try {
    const size = (await file.stat()).size
    const header = size >= HEADER_BYTES ? describe(await fileSource(file, 0).read(0, HEADER_BYTES)) : undefined
    const verdict = await checkImage(fileSource(file, 0), size, { vendorKey })
    if (values.json)
      io.stdout.write(
        `${JSON.stringify({ header, size, verdict: verdict.ok ? { ok: true, sha256: verdict.sha256 } : verdict })}\n`,
      )
    else {
      if (header) for (const [name, value] of Object.entries(header)) io.stdout.write(`${name.padEnd(10)} ${value}\n`)
      io.stdout.write(
        verdict.ok ? `verified   sha256 ${verdict.sha256}\n` : `REJECTED   ${verdict.reason}: ${verdict.message}\n`,
      )
    }
    return verdict.ok ? 0 : 1
  } finally {
    await file.close()
  }
}

function describe(bytes: Buffer): Record<string, string> | { error: string } {
  try {
    const h = parseHeader(bytes)
    return {
      kind: h.kind,
      version: h.version,
      hardware: h.hardware.join(','),
      floor: String(h.floor),
      payload: `${h.payloadLength} bytes, sha256 ${Buffer.from(h.payloadSha256).toString('hex')}`,
    }
  } catch (err) {
    return { error: (err as Error).message }
  }
}

function decodeVendorKey(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]{43}=?$/.test(text)) throw new UsageError('--vendor-key must be the base64 of 32 bytes')
  return new Uint8Array(Buffer.from(text, 'base64'))
}

async function pemPublicKey(path: string): Promise<Uint8Array> {
  const pem = await readFile(path, 'utf8')
  const key = pem.includes('PRIVATE KEY') ? createPublicKey(createPrivateKey(pem)) : createPublicKey(pem)
  if (key.asymmetricKeyType !== 'ed25519') throw new RangeError(`${path} holds no Ed25519 key`)
  return new Uint8Array(Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url'))
}
