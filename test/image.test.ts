// The upgrade image format and its archive: build, check in order, refuse every
// tampering; the ustar reader against GNU tar in each of its formats.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { mkdir, open, readFile, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import {
  buildImage,
  checkImage,
  extractArchive,
  HEADER_BYTES,
  ImageFormatError,
  packDirectory,
  parseHeader,
  walkArchive,
  type ArchiveSource,
} from '../image/index.js'
import { safePath } from '../image/tar.js'
import { main } from '../cli/hem-image/image-cli.js'
import { repoRoot } from './helpers/device.js'

const run = promisify(execFile)
const vendor = generateKeyPairSync('ed25519')
const vendorPem = vendor.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
const vendorKey = new Uint8Array(Buffer.from(vendor.publicKey.export({ format: 'jwk' }).x!, 'base64url'))

const bufferSource = (bytes: Buffer): ArchiveSource => ({
  read: async (position, length) => {
    if (position + length > bytes.length) throw new ImageFormatError('the archive ends inside an entry')
    return bytes.subarray(position, position + length)
  },
})

/** A tree to pack under `src`, and an empty `work` beside it (t.testdir() twice in one test would reuse the folder). */
async function tree(t: Test): Promise<{ root: string; work: string }> {
  const dir = t.testdir({
    src: {
      'index.html': '<h1>hem</h1>',
      css: { 'app.css': 'body{}' },
      js: { deep: { 'a.js': 'x'.repeat(3000) } },
      empty: {},
    },
    work: {},
  })
  return { root: join(dir, 'src'), work: join(dir, 'work') }
}

async function listTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const d of await readdir(root, { recursive: true, withFileTypes: true })) {
    const path = join(d.parentPath, d.name).slice(root.length + 1)
    out[path] = d.isFile()
      ? createHash('sha256')
          .update(await readFile(join(root, path)))
          .digest('hex')
      : 'dir'
  }
  return out
}

t.test('header: built, parsed, signed over the payload hash', async (t) => {
  const payload = await packDirectory((await tree(t)).root)
  const image = buildImage({ kind: 'ui', hardware: ['P'], floor: 7, version: '1.2.3' }, payload, vendorPem)
  t.equal(image.length, HEADER_BYTES + payload.length)
  const header = parseHeader(image)
  t.match(header, { kind: 'ui', hardware: ['P'], floor: 7, version: '1.2.3', payloadLength: payload.length })
  t.same(Buffer.from(header.payloadSha256), createHash('sha256').update(payload).digest())
  const verdict = await checkImage(bufferSource(image), image.length, { vendorKey, kind: 'ui', variant: 'P', floor: 7 })
  t.same(verdict, { ok: true, header: parseFields(image), sha256: createHash('sha256').update(image).digest('hex') })

  t.throws(() => buildImage({ kind: 'fw', hardware: [], floor: 0, version: '1' }, payload, vendorPem), RangeError)
  t.throws(() => buildImage({ kind: 'fw', hardware: ['P'], floor: -1, version: '1' }, payload, vendorPem), RangeError)
  t.throws(() => buildImage({ kind: 'fw', hardware: ['P'], floor: 0, version: 'a b' }, payload, vendorPem), RangeError)
  t.throws(
    () => buildImage({ kind: 'fw', hardware: ['P'], floor: 0, version: 'v'.repeat(33) }, payload, vendorPem),
    RangeError,
  )
})

function parseFields(image: Buffer) {
  const { signed: _s, signature: _g, ...fields } = parseHeader(image)
  return fields
}

t.test('check: every tampering is refused for the right reason', async (t) => {
  const payload = await packDirectory((await tree(t)).root)
  const image = buildImage({ kind: 'fw', hardware: ['E'], floor: 3, version: '2.0.0' }, payload, vendorPem)
  const check = (bytes: Buffer, expect = {}) => checkImage(bufferSource(bytes), bytes.length, { vendorKey, ...expect })
  const flip = (at: number) => {
    const copy = Buffer.from(image)
    copy[at]! ^= 1
    return copy
  }
  const cases: [string, Buffer, string, object?][] = [
    ['magic', flip(0), 'format'],
    ['kind byte', flip(8), 'format'],
    ['floor', flip(15), 'signature'],
    ['version', flip(16), 'signature'],
    ['payload length', flip(55), 'signature'],
    ['payload hash', flip(60), 'signature'],
    ['signature', flip(100), 'signature'],
    ['payload byte', flip(HEADER_BYTES + 700), 'integrity'],
    ['truncated', image.subarray(0, image.length - 1), 'integrity'],
    ['extended', Buffer.concat([image, Buffer.alloc(1)]), 'integrity'],
    ['header only', image.subarray(0, HEADER_BYTES - 1), 'format'],
    ['wrong kind', image, 'kind', { kind: 'ui' }],
    ['wrong hardware', image, 'hardware', { variant: 'P' }],
    ['below the floor', image, 'floor', { floor: 4 }],
  ]
  for (const [what, bytes, reason, expect] of cases) t.match(await check(bytes, expect), { ok: false, reason }, what)
  t.match(await check(image, { kind: 'fw', variant: 'E', floor: 3 }), { ok: true }, 'at the floor is fine')
  const other = generateKeyPairSync('ed25519')
  const foreign = buildImage(
    { kind: 'fw', hardware: ['E'], floor: 3, version: '2.0.0' },
    payload,
    other.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  )
  t.match(await check(foreign), { ok: false, reason: 'signature' }, 'signed by another key')
  const notTar = buildImage({ kind: 'fw', hardware: ['E'], floor: 0, version: '1' }, Buffer.alloc(1024, 7), vendorPem)
  t.match(
    await check(notTar),
    { ok: false, reason: 'format', message: /archive/ },
    'a signed payload that is no archive',
  )
})

t.test('archive: round trip, and GNU tar agrees both ways', async (t) => {
  const { root, work } = await tree(t)
  const packed = await packDirectory(root)
  t.same(await packDirectory(root), packed, 'deterministic')
  await writeFile(join(work, 'ours.tar'), packed)
  const listed = (await run('tar', ['-tvf', join(work, 'ours.tar')])).stdout
  t.match(listed, /js\/deep\/a\.js/)
  await mkdir(join(work, 'by-gnu'))
  await run('tar', ['-xf', join(work, 'ours.tar'), '-C', join(work, 'by-gnu')])
  t.same(await listTree(join(work, 'by-gnu')), await listTree(root), 'GNU tar unpacks what we pack')

  const long = join(root, 'a'.repeat(60), 'b'.repeat(60))
  await mkdir(long, { recursive: true })
  await writeFile(join(long, 'c'.repeat(60)), 'deep')
  for (const format of ['ustar', 'gnu', 'pax']) {
    if (format === 'gnu') await writeFile(join(long, 'n'.repeat(120)), 'a GNU long name')
    const archive = join(work, `${format}.tar`)
    await run('tar', [`--format=${format}`, '-cf', archive, '-C', root, '.'])
    const dest = join(work, `from-${format}`)
    const bytes = await readFile(archive)
    if (format === 'gnu') {
      await t.rejects(
        extractArchive(bufferSource(bytes), { length: bytes.length }, dest),
        { message: /entry type "L"/ },
        'GNU long names are refused clearly',
      )
      continue
    }
    await extractArchive(bufferSource(bytes), { length: bytes.length }, dest)
    t.same(await listTree(dest), await listTree(root), `we unpack what GNU tar --format=${format} packs`)
  }
})

t.test('archive: what could escape or confuse is refused', async (t) => {
  const entry = (name: string, type = '0', body = 'x') => {
    const header = Buffer.alloc(512)
    header.write(name, 0)
    header.write('0000644', 100)
    header.write(body.length.toString(8).padStart(11, '0'), 124)
    header.write(type, 156)
    header.write('ustar\x0000', 257)
    header.fill(0x20, 148, 156)
    let sum = 0
    for (const b of header) sum += b
    header.write(`${sum.toString(8).padStart(6, '0')}\x00 `, 148)
    const data = Buffer.alloc(Math.ceil(body.length / 512) * 512)
    data.write(body)
    return Buffer.concat([header, data])
  }
  const archive = (...entries: Buffer[]) => Buffer.concat([...entries, Buffer.alloc(1024)])
  const walk = (bytes: Buffer) => walkArchive(bufferSource(bytes), { length: bytes.length }, async () => undefined)
  t.same(
    (await walk(archive(entry('./ok.txt')))).map((e) => e.path),
    ['ok.txt'],
  )
  t.same(
    (await walk(archive(entry('d/f'), entry('d/', '5')))).map((e) => e.path),
    ['d/f', 'd'],
    'a directory named after its contents is fine',
  )
  const refusals: [string, Buffer, RegExp][] = [
    ['parent', archive(entry('../evil')), /not a safe relative path/],
    ['nested parent', archive(entry('a/../../evil')), /not a safe/],
    ['absolute', archive(entry('/etc/passwd')), /not a safe/],
    ['backslash', archive(entry('a\\b')), /not a safe/],
    ['symlink', archive(entry('link', '2')), /entry type "2"/],
    ['hard link', archive(entry('link', '1')), /entry type "1"/],
    ['device', archive(entry('dev', '3')), /entry type "3"/],
    ['twice', archive(entry('a'), entry('a')), /appears twice/],
    ['a file, then inside it', archive(entry('x'), entry('x/y')), /x\/y lies inside x, which is a file/],
    [
      'inside, then a file of its name',
      archive(entry('x/y'), entry('x')),
      /x is a file, but other entries lie inside it/,
    ],
    ['deeper inside, then a file of its name', archive(entry('x/y/z'), entry('x/y')), /x\/y is a file/],
    ['no end', entry('a'), /no end marker/],
    ['past the end', entry('a', '0', 'x'.repeat(600)).subarray(0, 1024), /runs past/],
  ]
  for (const [what, bytes, message] of refusals)
    await t.rejects(walk(bytes), { name: 'ImageFormatError', message }, what)
  const corrupt = archive(entry('a'))
  corrupt[0] = 0x62
  await t.rejects(walk(corrupt), { message: /checksum/ })
  t.throws(() => safePath(''), ImageFormatError)
  t.equal(safePath('./a/b/'), 'a/b')

  const dest = join(t.testdir({ exists: {} }), 'exists')
  await t.rejects(
    extractArchive(bufferSource(archive(entry('a'))), { length: 1536 }, dest),
    { code: 'EEXIST' },
    'never into a directory that exists',
  )
})

t.test('hem-image: build fw from the real build with a new version, build ui, inspect', async (t) => {
  const dir = t.testdir({ app: { 'index.html': '<p>app</p>' }, 'key.pem': vendorPem })
  const out: string[] = []
  const io = { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => out.push(s) } }
  const key = join(dir, 'key.pem')
  t.equal(
    await main(
      [
        'build',
        '--kind',
        'fw',
        '--version',
        '9.9.9',
        '--floor',
        '2',
        '--key',
        key,
        '--out',
        join(dir, 'fw.bin'),
        join(repoRoot, 'dist'),
      ],
      io,
    ),
    0,
    out.join(''),
  )
  t.equal(
    await main(
      ['build', '--kind', 'ui', '--version', 'ui-1', '--key', key, '--out', join(dir, 'ui.tar'), join(dir, 'app')],
      io,
    ),
    0,
  )
  out.length = 0
  t.equal(await main(['inspect', '--key', key, join(dir, 'fw.bin')], io), 0)
  t.match(out.join(''), /kind\s+fw[\s\S]*version\s+9\.9\.9[\s\S]*hardware\s+P,E[\s\S]*floor\s+2[\s\S]*verified/)
  out.length = 0
  t.equal(
    await main(
      ['inspect', '--json', '--vendor-key', Buffer.from(vendorKey).toString('base64'), join(dir, 'ui.tar')],
      io,
    ),
    0,
  )
  t.match(JSON.parse(out.join('')), { header: { kind: 'ui', hardware: 'P', version: 'ui-1' }, verdict: { ok: true } })

  const fw = await open(join(dir, 'fw.bin'), 'r+')
  await fw.write(Buffer.from([0xff]), 0, 1, HEADER_BYTES + 5000)
  await fw.close()
  out.length = 0
  t.equal(await main(['inspect', '--key', key, join(dir, 'fw.bin')], io), 1)
  t.match(out.join(''), /REJECTED\s+integrity/)
  t.equal(await main(['inspect', join(dir, 'ui.tar')], io), 1, 'the development key did not sign it')

  const usage: string[][] = [
    ['build', '--kind', 'os', '--out', 'x', dir],
    ['build', '--kind', 'ui', dir],
    ['build', '--kind', 'ui', '--out', 'x', '--version', '1', '--hardware', 'X', dir],
    ['build', '--kind', 'ui', '--out', 'x', '--version', '1', '--floor', '-1', dir],
    ['build', '--kind', 'ui', '--out', 'x', dir],
    ['inspect', '--vendor-key', 'short', 'x'],
    ['inspect'],
  ]
  for (const argv of usage) t.equal(await main(argv, io), 2, argv.join(' '))
  t.equal(
    await main(['build', '--kind', 'fw', '--key', key, '--out', join(dir, 'x.bin'), join(dir, 'app')], io),
    1,
    'fw from a directory that is no signed build',
  )
})
