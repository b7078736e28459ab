import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { request } from 'node:https'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildImage, HEADER_BYTES, MAX_IMAGE_BYTES, packDirectory } from '../image/index.js'
import { Non2xxError } from './measure.js'

const DEV_VENDOR_KEY = fileURLToPath(new URL('../../deploy/keys/vendor-dev.pem', import.meta.url))
/** A tar entry's header and the archive's two closing blocks. */
const TAR_OVERHEAD = 512 + 1024
const TAR_BLOCK = 512

/**
 * A management-app image as large as the upload endpoint takes (16 MiB, header included): one
 * file of random bytes, packed and signed with the development vendor key the way `hem-image`
 * and the tests build images, so that the device would accept it at its check.
 */
export async function uiImage(workDir: string): Promise<Buffer> {
  const dir = join(workDir, 'ui-image')
  await mkdir(dir, { recursive: true })
  await writeFile(
    join(dir, 'payload.bin'),
    randomBytes(Math.floor((MAX_IMAGE_BYTES - HEADER_BYTES - TAR_OVERHEAD) / TAR_BLOCK) * TAR_BLOCK),
  )
  const image = buildImage(
    { kind: 'ui', hardware: ['P', 'E'], floor: 0, version: 'bench' },
    await packDirectory(dir),
    await readFile(DEV_VENDOR_KEY, 'utf8'),
  )
  if (image.length > MAX_IMAGE_BYTES)
    throw new RangeError(`the bench image is ${image.length} bytes, over ${MAX_IMAGE_BYTES}`)
  return image
}

/**
 * POSTs an image as the family's clients do (octet-stream, attachment filename, Expect:
 * 100-continue, its length); resolves on a 2xx answer, throws a Non2xxError on any other.
 */
export function postImage(url: string, image: Buffer, token?: string): Promise<void> {
  const headers = {
    'content-type': 'application/octet-stream',
    'content-disposition': 'attachment; filename="webroot.tar"',
    'content-length': String(image.length),
    expect: '100-continue',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers, rejectUnauthorized: false, servername: 'localhost' }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () => {
        const status = res.statusCode ?? 0
        if (status >= 200 && status < 300) resolve()
        else reject(new Non2xxError(`upload answered ${status} ${text.slice(0, 200)}`))
      })
    })
    req.on('error', reject)
    req.on('continue', () => req.end(image))
  })
}
