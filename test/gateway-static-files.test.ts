// The management app's files as the gateway serves them (issue 39, item 5): compressed as Accept-Encoding asks (br,
// else gzip, else identity; q-values), a strong ETag per file and encoding, `no-cache` and a 304 when If-None-Match
// names it, the same headers to HEAD, the CSP on every answer; compressed once per install, and a new install_ui
// served at once under new tags; the path rules as they were.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { preferredEncoding } from '../gateway/accept-encoding.js'
import { AppFiles } from '../gateway/app-files.js'
import { noneMatchHits } from '../gateway/if-none-match.js'
import { STATIC_HEADERS } from '../gateway/static-site.js'
import { bootDevice } from './helpers/device.js'
import { imageOf, installUi } from './helpers/upload.js'

interface Got {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** One request, its body as the bytes that came (never decoded); its path as given (a URL would normalise it). */
function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Got> {
  const [, origin, path] = /^(https?:\/\/[^/]+)(.*)$/.exec(url)!
  const { hostname, port } = new URL(origin!)
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** The file as the client reads it: decoded by its Content-Encoding. */
function decoded(got: Got): Buffer {
  const encoding = got.headers['content-encoding']
  if (encoding === 'br') return brotliDecompressSync(got.body)
  if (encoding === 'gzip') return gunzipSync(got.body)
  t.equal(encoding, undefined, 'no other encoding')
  return got.body
}

/** Script-like text: it compresses, as the app's does. */
const script = (n: number, seed: string) =>
  Array.from({ length: n }, (_, i) => `export const ${seed}${i} = () => ${JSON.stringify(`${seed} ${i}`)};\n`).join('')

async function appDir(root: string, name: string, seed: string): Promise<{ dir: string; appJs: string }> {
  const dir = join(root, name)
  await mkdir(join(dir, 'chunks'), { recursive: true })
  const appJs = script(400, seed)
  await writeFile(join(dir, 'index.html'), `<!doctype html><title>${seed}</title><script type="module" src="app.js">`)
  await writeFile(join(dir, 'app.js'), appJs)
  await writeFile(join(dir, 'chunks', 'screen-AB12.js'), script(50, `${seed}screen`))
  // A format compressed already, and a file too small to gain: both go out as they are.
  await writeFile(join(dir, 'logo.png'), randomBytes(4000))
  await writeFile(join(dir, 'tiny.txt'), 'x')
  return { dir, appJs }
}

t.test('Accept-Encoding: br when offered, else gzip, else identity, by q-value', async (t) => {
  const cases: [string, string][] = [
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip, deflate', 'gzip'],
    ['', 'identity'],
    ['identity', 'identity'],
    ['deflate', 'identity'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0,gzip;q=0', 'identity'],
    ['*', 'br'],
    ['br;q=0, *', 'gzip'],
    ['*;q=0, gzip', 'gzip'],
    ['*;q=0', 'identity'],
    ['BR', 'br'],
    ['  Gzip ; Q = 0.5 ,  br ; q=0.4 ', 'gzip'],
    ['gzip;q=0.5, br;q=0.5', 'br'],
    ['x-gzip', 'gzip'],
    ['br;q=1.5, gzip', 'gzip'],
    ['br;q=abc', 'identity'],
    ['br;q=0.001', 'br'],
    ['br;q=0.0001', 'identity'],
    [',,br,,', 'br'],
  ]
  for (const [header, expected] of cases) t.equal(preferredEncoding(header), expected, JSON.stringify(header))
})

t.test('If-None-Match: the same tag, weak or strong, in a list, or *', async (t) => {
  const tag = '"abc-br"'
  t.ok(noneMatchHits('"abc-br"', tag))
  t.ok(noneMatchHits('W/"abc-br"', tag), 'weak comparison')
  t.ok(noneMatchHits('"x", "abc-br" ,"y"', tag), 'in a list')
  t.ok(noneMatchHits('"x,y", "abc-br"', tag), 'after a tag holding a comma')
  t.ok(noneMatchHits(' * ', tag))
  t.notOk(noneMatchHits('', tag))
  t.notOk(noneMatchHits('"abc"', tag), 'another encoding is another tag')
  t.notOk(noneMatchHits('abc-br', tag), 'unquoted')
  t.notOk(noneMatchHits('"abc-br', tag), 'unterminated')
  t.notOk(noneMatchHits('"x" "abc-br"', tag), 'no comma between')
})

t.test('each file compressed, tagged and revalidated; HEAD alike; the CSP on every answer', async (t) => {
  const root = t.testdir()
  const first = await appDir(root, 'first', 'one')
  const factoryWebroot = join(root, 'factory.img')
  await writeFile(factoryWebroot, await imageOf(first.dir, 'ui', '1.0.0', ['P']))
  const device = await bootDevice(t, { variant: 'P', dataDir: join(root, 'data'), factoryWebroot })
  const base = device.httpUrl!
  const chrome = 'gzip, deflate, br, zstd'

  const br = await get(`${base}/app.js`, { 'accept-encoding': chrome })
  t.equal(br.status, 200)
  t.equal(br.headers['content-encoding'], 'br', 'br when offered')
  t.equal(decoded(br).toString(), first.appJs, 'decompresses to the file exactly')
  t.ok(br.body.length < first.appJs.length / 4, `compressed: ${br.body.length} of ${first.appJs.length} bytes`)
  t.equal(br.headers['content-type'], 'text/javascript; charset=utf-8')
  t.equal(br.headers['vary'], 'Accept-Encoding')
  t.equal(br.headers['cache-control'], 'no-cache', 'revalidated every load')
  for (const [name, value] of STATIC_HEADERS) t.equal(br.headers[name.toLowerCase()], value, `${name} is sent`)
  const brTag = br.headers['etag'] as string
  t.match(brTag, /^"[A-Za-z0-9_-]{22}-br"$/, 'a strong tag of the content and its encoding')

  const gzip = await get(`${base}/app.js`, { 'accept-encoding': 'gzip, deflate' })
  t.equal(gzip.headers['content-encoding'], 'gzip', 'gzip when br is not offered')
  t.equal(decoded(gzip).toString(), first.appJs)
  const gzipTag = gzip.headers['etag'] as string
  t.equal(gzipTag, brTag.replace('-br"', '-gzip"'), 'the same content, another encoding')
  const plain = await get(`${base}/app.js`)
  t.equal(plain.headers['content-encoding'], undefined, 'identity when nothing is offered')
  t.equal(plain.body.toString(), first.appJs)
  t.equal(plain.headers['etag'], brTag.replace('-br"', '"'))
  t.equal(plain.headers['vary'], 'Accept-Encoding', 'Vary on identity too')
  t.equal((await get(`${base}/app.js`, { 'accept-encoding': 'br;q=0, gzip' })).headers['content-encoding'], 'gzip')
  t.equal((await get(`${base}/app.js`, { 'accept-encoding': '*' })).headers['content-encoding'], 'br')
  const again = await get(`${base}/app.js`, { 'accept-encoding': chrome })
  t.equal(again.headers['etag'], brTag, 'the tag is stable')
  t.same(again.body, br.body, 'and so are the bytes')

  const notModified = await get(`${base}/app.js`, { 'accept-encoding': chrome, 'if-none-match': brTag })
  t.equal(notModified.status, 304, 'If-None-Match naming the tag: 304')
  t.equal(notModified.body.length, 0, 'without a body')
  t.equal(notModified.headers['etag'], brTag)
  t.equal(notModified.headers['vary'], 'Accept-Encoding')
  t.equal(notModified.headers['cache-control'], 'no-cache')
  for (const [name, value] of STATIC_HEADERS) t.equal(notModified.headers[name.toLowerCase()], value, `304: ${name}`)
  t.equal((await get(`${base}/app.js`, { 'accept-encoding': chrome, 'if-none-match': `W/${brTag}` })).status, 304)
  t.equal(
    (await get(`${base}/app.js`, { 'accept-encoding': 'gzip', 'if-none-match': brTag })).status,
    200,
    'the br tag does not revalidate the gzip copy',
  )
  t.equal((await get(`${base}/app.js`, { 'accept-encoding': chrome, 'if-none-match': '"other"' })).status, 200)

  const head = await get(`${base}/app.js`, { 'accept-encoding': chrome }, 'HEAD')
  t.equal(head.status, 200)
  t.equal(head.body.length, 0, 'HEAD: no body')
  for (const name of ['content-encoding', 'content-type', 'etag', 'vary', 'cache-control', 'content-security-policy'])
    t.equal(head.headers[name], br.headers[name], `HEAD: ${name} as GET`)
  const headRevalidated = await get(`${base}/app.js`, { 'accept-encoding': chrome, 'if-none-match': brTag }, 'HEAD')
  t.equal(headRevalidated.status, 304, 'HEAD revalidates too')

  const chunk = await get(`${base}/chunks/screen-AB12.js`, { 'accept-encoding': chrome })
  t.equal(chunk.headers['content-encoding'], 'br', 'a chunk in a folder, compressed')
  t.equal(decoded(chunk).toString(), script(50, 'onescreen'))
  const png = await get(`${base}/logo.png`, { 'accept-encoding': chrome })
  t.equal(png.headers['content-encoding'], undefined, 'a png goes as it is')
  t.match(png.headers['etag'], /^"[A-Za-z0-9_-]{22}"$/)
  t.equal((await get(`${base}/logo.png`, { 'if-none-match': png.headers['etag'] as string })).status, 304)
  const tiny = await get(`${base}/tiny.txt`, { 'accept-encoding': chrome })
  t.equal(tiny.headers['content-encoding'], undefined, 'a file compression would grow goes as it is')
  t.equal(tiny.body.toString(), 'x')
  const index = await get(`${base}/`, { 'accept-encoding': chrome })
  t.equal(
    decoded(index).toString(),
    '<!doctype html><title>one</title><script type="module" src="app.js">',
    '/ is index',
  )

  const config = await get(`${base}/app-config.json`, { 'accept-encoding': chrome })
  t.equal(config.headers['cache-control'], 'no-store', '/app-config.json is never kept')
  t.equal(config.headers['etag'], undefined, 'nor tagged')
  t.match(JSON.parse(config.body.toString()), { cloud: null })
  t.equal(config.headers['content-security-policy'], STATIC_HEADERS[0]![1])

  // The path rules are those of before.
  for (const path of ['/../app.js', '/%2e%2e/app.js', '/chunks/../app.js', '/app.js%00', '/a%5capp.js', '/chunks'])
    t.equal((await get(`${base}${path}`, { 'accept-encoding': chrome })).status, 404, `${path}: 404`)
  t.equal((await get(`${base}/%zz`)).status, 400, 'bad percent-encoding: 400')
  t.equal((await get(`${base}/%61pp.js`)).body.toString(), first.appJs, 'decoded once')
  t.equal((await get(`${base}/app.js`, {}, 'POST')).status, 404, 'GET and HEAD only')

  // An owner's new app is served at once, under new tags: nothing of the old is kept.
  const second = await appDir(root, 'second', 'two')
  t.equal(await installUi(base, await imageOf(second.dir, 'ui', '2.0.0', ['P'])), 200, 'a new app installed')
  const fresh = await get(`${base}/app.js`, { 'accept-encoding': chrome, 'if-none-match': brTag })
  t.equal(fresh.status, 200, 'the old tag no longer revalidates')
  t.equal(decoded(fresh).toString(), second.appJs, 'the new bytes')
  t.not(fresh.headers['etag'], brTag, 'under a new tag')
  t.equal(decoded(await get(`${base}/app.js`, { 'accept-encoding': 'gzip' })).toString(), second.appJs)
  t.equal((await get(`${base}/logo.png`, { 'if-none-match': png.headers['etag'] as string })).status, 200)
})

t.test('a file is read and compressed once per install, then served from memory', async (t) => {
  const root = t.testdir()
  const first = await appDir(root, 'first', 'one')
  let current = { dir: first.dir, sha256: 'a'.repeat(64) }
  const files = new AppFiles({ current: () => current })
  const [br, gzip] = await Promise.all([files.answer('/app.js', 'br'), files.answer('/app.js', 'gzip')])
  t.equal(brotliDecompressSync(br.body).toString(), first.appJs)
  t.equal(gunzipSync(gzip.body).toString(), first.appJs)
  // Changed under the server's feet (never done by an install): what is served is what was read.
  await writeFile(join(first.dir, 'app.js'), 'changed')
  t.equal(await files.answer('/app.js', 'br'), br, 'the same answer, not compressed again')
  t.equal((await files.answer('/%61pp.js', 'identity')).body.toString(), first.appJs, 'by the path as decoded')
  t.equal((await files.answer('/app.js', 'gzip')).body, gzip.body)
  const second = await appDir(root, 'second', 'two')
  current = { dir: second.dir, sha256: 'b'.repeat(64) }
  const next = await files.answer('/app.js', 'br')
  t.equal(brotliDecompressSync(next.body).toString(), second.appJs, 'another install: read afresh')
  t.not(next.etag, br.etag)
  await t.rejects(files.answer('/missing.js', 'br'), { message: 'No such resource' }, 'no file: 404')
  await writeFile(join(second.dir, 'missing.js'), 'now here')
  t.equal((await files.answer('/missing.js', 'identity')).body.toString(), 'now here', 'a 404 is not kept')
})
