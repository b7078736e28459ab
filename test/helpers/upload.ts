import { request } from 'node:http'
import { buildImage, packDirectory, type ImageKind } from '../../image/index.js'
import { main as imageCli } from '../../cli/hem-image/image-cli.js'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { distDir, repoRoot } from './device.js'
import { api } from './keys.js'
import { until } from './until.js'
import type { Variant } from '../../protocol/device.js'

export const DEV_VENDOR_PEM = readFile(join(repoRoot, 'deploy', 'keys', 'vendor-dev.pem'), 'utf8')

export interface UploadAnswer {
  status: number
  json: Record<string, unknown>
}

const FILENAMES: Record<ImageKind, string> = { fw: 'firmware.bin', ui: 'webroot.tar' }

/**
 * POSTs an image the way clients of the family do (octet-stream, attachment filename, Expect:
 * 100-continue); `headers` overrides or, set to undefined, removes any of them.
 */
export function upload(
  base: string,
  kind: ImageKind,
  body: Uint8Array | ((write: (chunk: Uint8Array) => boolean) => Promise<void>),
  headers: Record<string, string | undefined> = {},
  token?: string,
): Promise<UploadAnswer> {
  const merged: Record<string, string | undefined> = {
    'content-type': 'application/octet-stream',
    'content-disposition': `attachment; filename="${FILENAMES[kind]}"`,
    expect: '100-continue',
    ...(body instanceof Uint8Array ? { 'content-length': String(body.length) } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...headers,
  }
  const sent = Object.fromEntries(
    Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined),
  )
  return new Promise((resolve, reject) => {
    const req = request(`${base}/api/system/upgrade/upload_${kind}`, { method: 'POST', headers: sent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({ status: res.statusCode ?? 0, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} })
      })
    })
    req.on('error', reject)
    const write = async () => {
      if (body instanceof Uint8Array) req.end(body)
      else {
        await body((chunk) => req.write(chunk))
        req.end()
      }
    }
    if (merged.expect) req.on('continue', () => void write().catch(reject))
    else void write().catch(reject)
  })
}

/** Uploads, checks and installs a ui image as hemctl would; answers the first refusal's status, or install_ui's. */
export async function installUi(base: string, image: Buffer, token?: string): Promise<number> {
  const uploaded = (await upload(base, 'ui', image, {}, token)).status
  if (uploaded !== 200) return uploaded
  let check = await api(`${base}/api/system/upgrade/check_ui`, token)
  await until(
    'the check ends',
    async () => ![201, 202].includes((check = await api(`${base}/api/system/upgrade/check_ui`, token)).status),
  )
  if (check.status !== 200) return check.status
  return (await api(`${base}/api/system/upgrade/install_ui`, token)).status
}

/** A signed image (development vendor key) of a directory's files. */
export async function imageOf(
  dir: string,
  kind: ImageKind,
  version: string,
  hardware: Variant[] = ['P', 'E'],
  floor = 0,
): Promise<Buffer> {
  return buildImage({ kind, hardware, floor, version }, await packDirectory(dir), await DEV_VENDOR_PEM)
}

/** `hem-image build --kind fw` of this build (dist/) into `out`, quietly; answers the exit code. */
export function firmwareImage(out: string, version: string, ...flags: string[]): Promise<number> {
  const quiet = { write: () => true }
  return imageCli(['build', '--kind', 'fw', '--version', version, ...flags, '--out', out, distDir], {
    stdout: quiet,
    stderr: quiet,
  })
}
