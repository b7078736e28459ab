// The upgrade image format and its archive: build, check in order, refuse every
// tampering; the ustar reader against GNU tar in each of its formats.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { mkdir, open, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import {
  buildImage,
  bytesSource,
  checkImage,
  extractArchive,
  HEADER_BYTES,
  ImageFormatError,
  MAX_IMAGE_BYTES,
  packDirectory,
  parseHeader,
  fileSource,
  loadFirmware,
  walkArchive,
} from '../image/index.js'
import { safePath } from '../image/tar.js'
import { main } from '../cli/hem-image/image-cli.js'
import { runCli } from './helpers/cli-output.js'
import { repoRoot } from './helpers/device.js'

const run = promisify(execFile)
const vendor = generateKeyPairSync('ed25519')
const vendorPem = vendor.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
const vendorKey = new Uint8Array(Buffer.from(vendor.publicKey.export({ format: 'jwk' }).x!, 'base64url'))

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

/** One ustar entry as a hand-written archive holds it: header (its checksum right) and data; `size` as written. */
function entry(name: string, type = '0', body = 'x', size = body.length.toString(8).padStart(11, '0')): Buffer {
  const header = Buffer.alloc(512)
  header.write(name, 0)
  header.write('0000644', 100)
  header.write(size, 124)
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
const walk = (bytes: Buffer) => walkArchive(bytesSource(bytes), { length: bytes.length }, async () => undefined)

t.test('header: built, parsed, signed over the payload hash', async (t) => {
  const payload = await packDirectory((await tree(t)).root)
  const image = buildImage({ kind: 'ui', hardware: ['P'], floor: 7, version: '1.2.3' }, payload, vendorPem)
  t.equal(image.length, HEADER_BYTES + payload.length)
  const header = parseHeader(image)
  t.match(header, { kind: 'ui', hardware: ['P'], floor: 7, version: '1.2.3', payloadLength: payload.length })
  t.same(Buffer.from(header.payloadSha256), createHash('sha256').update(payload).digest())
  const verdict = await checkImage(bytesSource(image), image.length, { vendorKey, kind: 'ui', variant: 'P', floor: 7 })
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
  const check = (bytes: Buffer, expect = {}) => checkImage(bytesSource(bytes), bytes.length, { vendorKey, ...expect })
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
        extractArchive(bytesSource(bytes), { length: bytes.length }, dest),
        { message: /entry type "L"/ },
        'GNU long names are refused clearly',
      )
      continue
    }
    await extractArchive(bytesSource(bytes), { length: bytes.length }, dest)
    t.same(await listTree(dest), await listTree(root), `we unpack what GNU tar --format=${format} packs`)
  }
})

t.test('archive: what could escape or confuse is refused', async (t) => {
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
    extractArchive(bytesSource(archive(entry('a'))), { length: 1536 }, dest),
    { code: 'EEXIST' },
    'never into a directory that exists',
  )
})

t.test('archive: names up to the ustar limits round-trip; longer ones and links are not packed', async (t) => {
  const { root, work } = await tree(t)
  // 100 bytes fill the name field with no NUL; a longer path is split at a slash into prefix and name.
  await writeFile(join(root, 'f'.repeat(100)), 'a full name field')
  const deep = join(root, 'p'.repeat(90), 'q'.repeat(50))
  await mkdir(deep, { recursive: true })
  await writeFile(join(deep, 'r'.repeat(90)), 'prefix and name')
  const packed = await packDirectory(root)
  await extractArchive(bytesSource(packed), { length: packed.length }, join(work, 'out'))
  t.same(await listTree(join(work, 'out')), await listTree(root))
  await writeFile(join(work, 'ours.tar'), packed)
  t.match(
    (await run('tar', ['-tf', join(work, 'ours.tar')])).stdout,
    `${'p'.repeat(90)}/${'q'.repeat(50)}/${'r'.repeat(90)}`,
  )

  await writeFile(join(deep, 'n'.repeat(101)), 'no slash leaves a name of 100 bytes or less')
  await t.rejects(packDirectory(root), { name: 'ImageFormatError', message: /n{101} is too long for a ustar name/ })
  await rm(join(deep, 'n'.repeat(101)))
  await symlink('index.html', join(root, 'link'))
  await t.rejects(packDirectory(root), {
    name: 'ImageFormatError',
    message: 'link is neither a file nor a directory: images hold only those',
  })
})

t.test('archive: malformed fields and pax records, too many entries, a source that ends early', async (t) => {
  const pax = (records: string) => entry('PaxHeader', 'x', records)
  const refusals: [string, Buffer, string][] = [
    ['a size that is not octal', archive(entry('a', '0', 'x', '00000000009')), 'bad size field'],
    ['a pax record without a length', archive(pax('path=a\n'), entry('a')), 'bad pax record'],
    ['a pax record longer than its header', archive(pax('99 path=a\n'), entry('a')), 'bad pax record'],
    ['a pax record without =', archive(pax('7 path\n'), entry('a')), 'bad pax record'],
    ['a pax size that is no number', archive(pax('12 size=abc\n'), entry('a')), 'bad pax size'],
  ]
  for (const [what, bytes, message] of refusals)
    await t.rejects(walk(bytes), { name: 'ImageFormatError', message }, what)
  t.same(
    (await walk(archive(pax('16 path=renamed\n'), entry('a')))).map((e) => e.path),
    ['renamed'],
    'a well-formed pax path is taken',
  )

  const many = archive(...Array.from({ length: 10_001 }, (_, i) => entry(`d${i}/`, '5', '')))
  await t.rejects(walk(many), { name: 'ImageFormatError', message: 'more than 10000 entries' })

  // The archive's length is taken before its bytes are read: bytes or a file that end sooner are refused.
  const cut = archive(entry('a', '0', 'x'.repeat(600))).subarray(0, 1024)
  await t.rejects(
    walkArchive(bytesSource(Buffer.concat([Buffer.alloc(100), cut]), 100), { length: 4096 }, async () => undefined),
    { name: 'ImageFormatError', message: 'the archive ends inside an entry' },
    'bytes in memory',
  )
  const path = join(t.testdir(), 'cut.tar')
  await writeFile(path, cut)
  const file = await open(path, 'r')
  t.teardown(() => file.close())
  await t.rejects(
    walkArchive(fileSource(file, 0), { length: 4096 }, async () => undefined),
    { name: 'ImageFormatError', message: 'the archive ends inside an entry' },
    'a file',
  )
})

t.test('header: a field out of its range is refused by name', async (t) => {
  const image = buildImage(
    { kind: 'fw', hardware: ['P'], floor: 1, version: 'v'.repeat(32) },
    Buffer.alloc(0),
    vendorPem,
  )
  t.equal(parseHeader(image).version, 'v'.repeat(32), 'a 32-byte version fills its field without a NUL')
  const edited = (edit: (copy: Buffer) => void) => {
    const copy = Buffer.from(image)
    edit(copy)
    return copy
  }
  const refusals: [string, Buffer, string][] = [
    ['short', image.subarray(0, HEADER_BYTES - 1), 'an image starts with a 152-byte header; this has 151 bytes'],
    ['no hardware', edited((b) => void (b[9] = 0)), 'bad hardware mask 0'],
    ['an unknown hardware bit', edited((b) => void (b[9] = 5)), 'bad hardware mask 5'],
    ['reserved bytes', edited((b) => void (b[11] = 1)), 'reserved header bytes are not zero'],
    ['a version with a space', edited((b) => void (b[20] = 0x20)), 'bad version field'],
    ['bytes after the version NUL', edited((b) => void b.fill(0, 20, 24)), 'bad version field'],
    [
      'a payload over the limit',
      edited((b) => void b.writeBigUInt64BE(BigInt(MAX_IMAGE_BYTES), 48)),
      `the payload length ${MAX_IMAGE_BYTES} is over ${MAX_IMAGE_BYTES - HEADER_BYTES}`,
    ],
  ]
  for (const [what, bytes, message] of refusals)
    t.throws(() => parseHeader(bytes), { name: 'ImageFormatError', message }, what)
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

t.test('hem-image: what it refuses, and what inspect shows of a file that is no image', async (t) => {
  const dir = t.testdir({ app: { 'index.html': '<p>app</p>' }, other: {}, 'key.pem': vendorPem })
  const key = join(dir, 'key.pem')
  const cli = (...argv: string[]) => runCli(main, argv)
  const ui = ['build', '--kind', 'ui', '--version', '1', '--key', key, '--out']

  const usage: [string[], RegExp][] = [
    [[...ui, join(dir, 'x'), join(dir, 'app'), join(dir, 'other')], /name exactly one directory/],
    [[...ui, join(dir, 'x'), '--floor', '4294967296', join(dir, 'app')], /--floor must be an integer from 0/],
    [['inspect', '--key', key, '--vendor-key', 'A'.repeat(43), join(dir, 'x')], /give --key or --vendor-key/],
  ]
  for (const [argv, message] of usage) t.match(await cli(...argv), { code: 2, stderr: message }, argv.join(' '))

  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
  await writeFile(join(dir, 'rsa.pem'), rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }))
  t.match(
    await cli(...ui.slice(0, -3), '--key', join(dir, 'rsa.pem'), '--out', join(dir, 'rsa.img'), join(dir, 'app')),
    { code: 1, stderr: 'hem-image build: the vendor key must be an Ed25519 private key\n' },
    'another kind of key would sign a header of another length',
  )
  t.match(await cli(...ui, join(dir, 'x'), '--key', join(dir, 'none.pem'), join(dir, 'app')), {
    code: 1,
    stderr: /^hem-image build: ENOENT: no such file or directory, open '.*none\.pem'\n$/,
  })
  await writeFile(join(dir, 'app', 'big.bin'), Buffer.alloc(MAX_IMAGE_BYTES))
  t.match(await cli(...ui, join(dir, 'big.img'), join(dir, 'app')), {
    code: 1,
    stderr: /the payload must be at most 16777064 bytes/,
  })
  await rm(join(dir, 'app', 'big.bin'))

  const dist = join(repoRoot, 'dist')
  const { version } = await loadFirmware(dist)
  const built = await cli('build', '--kind', 'fw', '--key', key, '--out', join(dir, 'fw.img'), dist)
  t.match(built, { code: 0, stdout: `fw ${version} for P,E, floor 0` }, 'fw keeps the build its own version')
  const publicPem = join(dir, 'public.pem')
  await writeFile(publicPem, vendor.publicKey.export({ format: 'pem', type: 'spki' }))
  t.match(await cli('inspect', '--key', publicPem, join(dir, 'fw.img')), {
    code: 0,
    stdout: `version    ${version}`,
  })
  await writeFile(join(dir, 'rsa-public.pem'), rsa.publicKey.export({ format: 'pem', type: 'spki' }))
  t.match(await cli('inspect', '--key', join(dir, 'rsa-public.pem'), join(dir, 'fw.img')), {
    code: 1,
    stderr: /rsa-public\.pem holds no Ed25519 key/,
  })

  await writeFile(join(dir, 'short.img'), 'HEMIMG01')
  t.same(
    JSON.parse((await cli('inspect', '--json', '--key', key, join(dir, 'short.img'))).stdout),
    { size: 8, verdict: { ok: false, reason: 'format', message: '8 bytes is shorter than an image header' } },
    'no header to show',
  )
  await writeFile(join(dir, 'zeros.img'), Buffer.alloc(HEADER_BYTES + 10))
  t.same(
    await cli('inspect', '--key', key, join(dir, 'zeros.img')),
    {
      code: 1,
      stdout: 'error      not a hem image (bad magic)\nREJECTED   format: not a hem image (bad magic)\n',
      stderr: '',
    },
    'a header that does not parse is told, not shown',
  )

  // Anything but bad input is a bug: it keeps its stack instead of becoming a one-line message.
  const broken = {
    write: () => {
      throw new Error('stdout is gone')
    },
  }
  await t.rejects(main(['inspect', '--key', key, join(dir, 'fw.img')], { stdout: broken, stderr: broken }), {
    name: 'Error',
    message: 'stdout is gone',
  })
})
