// Upload, check and install over the API: the management app end to end, every
// refusal of the upload's headers, rejected images, the audit records, and E.
import t, { type Test } from 'tap'
import { request as httpRequest } from 'node:http'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { LogResult, LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { readJournal } from './helpers/journal.js'
import { api } from './helpers/keys.js'
import { login, owned } from './helpers/owner.js'
import { until } from './helpers/until.js'
import { firmwareImage, imageOf, upload } from './helpers/upload.js'
import { rawExchange, requestHead } from './helpers/raw-http.js'

/** The device's data dir and an app's files, side by side (t.testdir() twice in one test would reuse the folder). */
function dirs(t: Test, app: Record<string, string | Record<string, string>>): { data: string; app: string } {
  const root = t.testdir({ data: {}, app })
  return { data: join(root, 'data'), app: join(root, 'app') }
}

/** A GET with the path sent exactly as given (no client-side normalisation). */
function rawGet(
  base: string,
  path: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base)
    const req = httpRequest({ hostname, port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      )
    })
    req.on('error', reject)
    req.end()
  })
}

/** Polls check until it stops answering 202; returns the final answer's status. */
async function checked(
  base: string,
  kind: 'fw' | 'ui',
  token?: string,
): Promise<{ first: number; last: number; json: Record<string, unknown> }> {
  const first = (await api(`${base}/api/system/upgrade/check_${kind}`, token)).status
  let answer = await api(`${base}/api/system/upgrade/check_${kind}`, token)
  await until(
    'the check ends',
    async () => (answer = await api(`${base}/api/system/upgrade/check_${kind}`, token)).status !== 202,
  )
  return { first, last: answer.status, json: answer.json }
}

t.test('P, fresh: upload, check and install the management app; uis shows it', async (t) => {
  const { data, app } = dirs(t, { 'index.html': '<h1>hem</h1>', js: { 'app.js': 'console.log(1)' } })
  const device = await bootDevice(t, { variant: 'P', dataDir: data })
  const base = device.httpUrl!
  const image = await imageOf(app, 'ui', 'ui-1', ['P'])

  t.equal((await api(`${base}/api/system/upgrade/check_ui`, undefined)).status, 404, 'nothing uploaded')
  const install0 = await api(`${base}/api/system/upgrade/install_ui`, undefined)
  t.equal(install0.status, 406, 'nothing verified')
  t.equal((await upload(base, 'ui', image)).status, 200)
  const check = await checked(base, 'ui')
  t.equal(check.first, 201, 'the check starts')
  t.equal(check.last, 200, 'and verifies')
  t.equal((await api(`${base}/api/system/upgrade/install_ui`, undefined)).status, 200)
  const version = (await api(`${base}/api/system/version`, undefined)).json
  t.equal(version.uis, createHash('sha256').update(image).digest('hex'), 'version.uis is the image hash')
  t.equal((await api(`${base}/api/system/upgrade/check_ui`, undefined)).status, 404, 'the staged image is consumed')

  const index = await rawGet(base, '/')
  t.equal(index.status, 200, 'the app is served at / at once')
  t.equal(index.body, '<h1>hem</h1>')
  t.equal(index.headers['content-type'], 'text/html; charset=utf-8')
  t.match(index.headers['content-security-policy'], /default-src 'self'/)
  t.equal(index.headers['x-content-type-options'], 'nosniff')
  const script = await rawGet(base, '/js/app.js')
  t.same(
    [script.status, script.headers['content-type'], script.body],
    [200, 'text/javascript; charset=utf-8', 'console.log(1)'],
  )
  for (const path of [
    '/nope.html',
    '/js/',
    '/%2e%2e/%2e%2e/device.json',
    '/js/..%2f..%2fdevice.json',
    '/js%5capp.js',
    '/a%00b',
    '//etc/passwd',
  ]) {
    t.equal((await rawGet(base, path)).status, 404, `${path}: 404`)
  }
  t.equal((await rawGet(base, '/js/%61pp.js')).status, 200, 'a path is percent-decoded once')
  t.equal((await rawGet(base, '/%zz')).status, 400, 'bad percent-encoding')
  t.equal((await rawGet(base, '/api/nope')).status, 404, 'the API keeps its own 404')

  const records = (await readJournal(device.dataDir)).records
  const audits = records.filter((r) => r.type === LogType.UPGRADE)
  t.match(
    audits.map((r) => [r.result, r.decoded?.source]),
    [
      [LogResult.ERROR, 406],
      [LogResult.OK, 200],
    ],
    'UPGRADE ERROR 406, then OK 200',
  )
  const transitions = records
    .filter((r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'upgrade')
    .map((r) => `${r.decoded?.from}>${r.decoded?.to}`)
  t.same(transitions, [
    'idle>receiving',
    'receiving>uploaded',
    'uploaded>checking',
    'checking>verified',
    'verified>installing',
    'installing>installed',
  ])
})

t.test('upload refusals: length, size, type, filename; rejected images; busy', async (t) => {
  const { data, app } = dirs(t, { 'index.html': 'x' })
  const device = await bootDevice(t, { variant: 'P', dataDir: data })
  const base = device.httpUrl!
  const image = await imageOf(app, 'ui', 'ui-2', ['P'])
  const cases: [string, Record<string, string | undefined>, number, string][] = [
    ['chunked', { 'content-length': undefined, 'transfer-encoding': 'chunked' }, 411, 'length_required'],
    ['too large', { 'content-length': String(16 * 1024 * 1024 + 1) }, 413, 'payload_too_large'],
    ['no filename', { 'content-disposition': 'attachment' }, 413, 'no_filename'],
    ['no disposition', { 'content-disposition': undefined }, 413, 'no_filename'],
    ['wrong filename', { 'content-disposition': 'attachment; filename="firmware.bin"' }, 400, 'bad_filename'],
    ['inline', { 'content-disposition': 'inline; filename="webroot.tar"' }, 400, 'bad_filename'],
    ['json', { 'content-type': 'application/json' }, 400, 'bad_content_type'],
  ]
  for (const [what, headers, status, error] of cases) {
    const answer = await upload(base, 'ui', image, { ...headers, expect: undefined })
    t.equal(answer.status, status, what)
    t.equal(answer.json.error, error, what)
  }
  t.equal(
    (await upload(base, 'ui', image, { 'content-disposition': 'attachment; filename=ui.bin' })).status,
    200,
    'ui.bin, unquoted, is accepted too',
  )
  t.equal((await upload(base, 'ui', image, { expect: undefined })).status, 200, 'Expect: 100-continue is not required')

  const tampered = Buffer.from(image)
  tampered[tampered.length - 600]! ^= 0x40
  t.equal((await upload(base, 'ui', tampered)).status, 200, 'a tampered image uploads')
  const check = await checked(base, 'ui')
  t.equal(check.last, 406, 'but its check rejects it')
  t.match(check.json, { error: 'rejected', message: /integrity/ })
  t.equal((await api(`${base}/api/system/upgrade/install_ui`, undefined)).status, 406)

  const fwForE = await imageOf(app, 'fw', '9.0.0', ['E'])
  t.equal((await upload(base, 'fw', fwForE)).status, 200)
  t.match((await checked(base, 'fw')).json, { message: /hardware/ }, 'an E image on P')
  t.equal((await upload(base, 'fw', image)).status, 200)
  t.match((await checked(base, 'fw')).json, { message: /kind/ }, 'a ui image as firmware')

  // A slow upload holds the pipeline: a second one of the same kind waits its turn (409).
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  const slow = upload(
    base,
    'ui',
    async (write) => {
      write(image.subarray(0, 1000))
      await held
      write(image.subarray(1000))
    },
    { 'content-length': String(image.length) },
  )
  await until(
    'the first upload runs',
    async () => (await api(`${base}/api/system/upgrade/check_ui`, undefined)).status === 404,
  )
  await new Promise((resolve) => setTimeout(resolve, 200))
  const second = await upload(base, 'ui', image)
  t.equal(second.status, 409, 'a second upload while one runs')
  release()
  t.equal((await slow).status, 200, 'the first completes')
})

t.test('P, personalised: a token with system:upgrade or system:config; others refused', async (t) => {
  const { data, app } = dirs(t, { 'index.html': 'y' })
  const o = await owned(t, { variant: 'P', dataDir: data })
  const image = await imageOf(app, 'ui', 'ui-3', ['P'])
  t.equal((await upload(o.base, 'ui', image)).status, 401, 'no token once personalised')
  t.equal((await upload(o.base, 'ui', image, {}, await login(o.base, 'keymgmt:list'))).status, 403, 'another scope')
  t.equal((await upload(o.base, 'ui', image, {}, await login(o.base, 'system:upgrade'))).status, 200)
  const token = await login(o.base, 'system:config')
  t.equal((await checked(o.base, 'ui', token)).last, 200)
  t.equal((await api(`${o.base}/api/system/upgrade/install_ui`, token)).status, 200)
  const records = (await readJournal(o.device.dataDir)).records
  t.ok(
    records.some((r) => r.type === LogType.FAILED_SCOPE_CHECK && r.decoded?.scope === 'keymgmt:list'),
    'the scope failure is journaled',
  )
  t.ok(
    records.some((r) => r.type === LogType.UPGRADE && r.result === LogResult.OK && r.subject === 'U'),
    'the install names its user',
  )
})

t.test('E: firmware routes answer, management-app routes are 404', async (t) => {
  const { data, app } = dirs(t, { 'index.html': 'e' })
  const device = await bootDevice(t, { variant: 'E', dataDir: data })
  const base = device.httpUrl!
  for (const path of ['check_ui', 'install_ui'])
    t.equal((await api(`${base}/api/system/upgrade/${path}`, undefined)).status, 404, path)
  t.equal((await upload(base, 'ui', Buffer.alloc(10))).status, 404, 'upload_ui')
  t.equal((await api(`${base}/api/system/upgrade/check_fw`, undefined)).status, 404, 'check_fw: nothing uploaded')
  const version = (await api(`${base}/api/system/version`, undefined)).json
  t.notOk('uis' in version)

  const image = join(data, '..', 'fw.bin')
  t.equal(await firmwareImage(image, '7.0.0', '--hardware', 'E'), 0)
  const notBuild = await imageOf(app, 'fw', '7.0.0', ['E'])
  t.equal((await upload(base, 'fw', notBuild)).status, 200)
  t.equal((await checked(base, 'fw')).last, 200, 'a signed archive of any files passes the check')
  t.match(
    (await api(`${base}/api/system/upgrade/install_fw`, undefined)).json,
    { error: 'not_verified', message: /no bootable build/ },
    'but a firmware install wants a build',
  )
  const bytes = await readFile(image)
  t.equal((await upload(base, 'fw', bytes.subarray(0, bytes.length - 10))).status, 200, 'a truncated image uploads')
  t.match((await checked(base, 'fw')).json, { message: /integrity/ }, 'and is rejected')
  t.equal((await upload(base, 'fw', bytes)).status, 200)
  t.equal((await checked(base, 'fw')).last, 200)
  t.equal((await api(`${base}/api/system/upgrade/install_fw`, undefined)).status, 200, 'firmware installs on E')
  // No launcher in this process: the device restarts in place, and the slot waits for the next start of hemd.
  // A reboot starts a journal file: wait for it, and for the device to answer from it.
  await until(
    'back after the restart',
    async () =>
      (await readJournal(data)).files.length === 2 &&
      (await api(`${base}/api/system/status`, undefined)).status === 200,
  )
  t.match(JSON.parse(await readFile(join(data, 'boot', 'slots.json'), 'utf8')), {
    active: 'A',
    trial: { slot: 'B', version: '7.0.0' },
  })
})

t.test('dosprot bounds an upload too: a stalled one gets 408 and frees the pipeline', async (t) => {
  const o = await owned(t, { dataDir: dirs(t, {}).data })
  t.equal((await api(`${o.base}/api/system/config`, o.token, { http_option_dosprot_mode: 1 })).status, 200)
  const token = await login(o.base, 'system:upgrade')
  await until(
    'the gateway knows the new dosprot',
    async () => (await api(`${o.base}/api/system/status`, undefined)).status === 200,
  )
  const stalled = await rawExchange(
    { port: Number(new URL(o.base).port), tls: false },
    {
      steps: [
        requestHead('POST', '/api/system/upgrade/upload_fw', [
          ['Host', '127.0.0.1'],
          ['Authorization', `Bearer ${token}`],
          ['Content-Type', 'application/octet-stream'],
          ['Content-Disposition', 'attachment; filename="firmware.bin"'],
          ['Content-Length', '100000'],
        ]),
        Buffer.alloc(1000),
      ],
      timeoutMs: 5000,
    },
  )
  t.equal(stalled.responses[0]?.status, 408, 'the stalled upload timed out')
  await until(
    'the next upload is taken',
    async () => (await upload(o.base, 'fw', Buffer.alloc(64), {}, token)).status === 200,
  )
})
