// The management app there at first start (issue 24, item 1): a P device with no app installs the
// factory image it is given (hemd gives its build's own, dist/factory-webroot.img) after the checks of
// any image, and journals it; an owner's install_ui replaces it for good; E has no app; an image that
// does not verify installs nothing and the device boots all the same, saying why in one warning.
import t, { type Test } from 'tap'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { STATIC_HEADERS } from '../gateway/static-site.js'
import { buildImage, FACTORY_WEBROOT_IMAGE, packDirectory } from '../image/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import type { DeviceOptions } from '../runtime/types.js'
import { SETPRIV } from '../runtime/service-accounts.js'
import { bootDevice, distDir } from './helpers/device.js'
import { runHemd } from './helpers/hemd-process.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { DEV_VENDOR_PEM, imageOf, installUi } from './helpers/upload.js'

const FACTORY_PAGE = '<h1>factory</h1>'

/** A test's own folders: the factory app's files, an owner's app, and room for data dirs and images. */
function folders(t: Test): { root: string; factoryApp: string; ownerApp: string } {
  const root = t.testdir({
    factory: { 'index.html': FACTORY_PAGE, 'app.js': 'console.log("factory")' },
    owner: { 'index.html': '<h1>owner</h1>' },
  })
  return { root, factoryApp: join(root, 'factory'), ownerApp: join(root, 'owner') }
}

/** A ui image of `dir` for P, signed with the development vendor key unless `pem` says otherwise. */
async function appImage(dir: string, pem?: string): Promise<Buffer> {
  return buildImage(
    { kind: 'ui', hardware: ['P'], floor: 0, version: '1.0.0' },
    await packDirectory(dir),
    pem ?? (await DEV_VENDOR_PEM),
  )
}

/** The warnings and errors a device logs, one parsed line each. */
function capturedLog(): { logger: DeviceOptions['logger']; lines: { msg: string; why?: string }[] } {
  const lines: { msg: string; why?: string }[] = []
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  return { logger, lines }
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

async function upgrades(dataDir: string): Promise<unknown[][]> {
  return (await readJournal(dataDir)).records
    .filter((r) => r.type === LogType.UPGRADE)
    .map((r) => [r.result, r.decoded?.source, r.decoded?.kind, r.decoded?.sha256])
}

/** Upload, check and install on a fresh device (no token needed yet), as the owner's app would be. */
t.test('a fresh P device serves its factory app at /, journaled once; E has none', async (t) => {
  const { root, factoryApp } = folders(t)
  const image = await appImage(factoryApp)
  const factoryWebroot = join(root, 'factory.img')
  await writeFile(factoryWebroot, image)
  const log = capturedLog()

  const p = await bootDevice(t, { variant: 'P', dataDir: join(root, 'p'), factoryWebroot, logger: log.logger })
  const index = await call(`${p.httpUrl}/`)
  t.equal(index.status, 200, 'GET / answers')
  t.equal(index.text, FACTORY_PAGE, 'with the factory index.html')
  t.equal(index.headers['content-type'], 'text/html; charset=utf-8')
  for (const [name, value] of STATIC_HEADERS) t.equal(index.headers[name.toLowerCase()], value, `${name} is sent`)
  t.equal((await call(`${p.httpUrl}/app.js`)).text, 'console.log("factory")', 'and its other files')
  t.equal((await call(`${p.httpUrl}/api/system/version`)).json.uis, sha256(image), 'version.uis is the image hash')
  t.same(
    await upgrades(p.dataDir),
    [[LogResult.OK, 'factory', 'ui', sha256(image)]],
    'the install is journaled as an UPGRADE of the ui from the factory',
  )
  t.same(log.lines, [], 'nothing to warn about')

  const e = await bootDevice(t, { variant: 'E', dataDir: join(root, 'e'), factoryWebroot, logger: log.logger })
  t.equal((await call(`${e.httpUrl}/`)).status, 404, 'E: GET / is 404')
  t.notOk('uis' in (await call(`${e.httpUrl}/api/system/version`)).json, 'E: no uis')
  t.same(await upgrades(e.dataDir), [], 'E: nothing journaled')
  t.same(log.lines, [], 'E: nothing to warn about either')
})

t.test("an owner's install_ui replaces it, and no boot brings the factory app back", async (t) => {
  const { root, factoryApp, ownerApp } = folders(t)
  const factory = await appImage(factoryApp)
  const factoryWebroot = join(root, 'factory.img')
  await writeFile(factoryWebroot, factory)
  const dataDir = join(root, 'data')
  const device = await bootDevice(t, { variant: 'P', dataDir, factoryWebroot })
  t.equal((await call(`${device.httpUrl}/`)).text, FACTORY_PAGE, 'the factory app first')

  const owners = await imageOf(ownerApp, 'ui', 'owner-1', ['P'])
  t.equal(await installUi(device.httpUrl!, owners), 200, 'the owner installs an app')
  t.equal((await call(`${device.httpUrl}/`)).text, '<h1>owner</h1>', "the owner's app is served at once")

  await device.restart()
  t.equal((await call(`${device.httpUrl}/`)).text, '<h1>owner</h1>', 'and after a reboot')
  await device.stop()
  const again = await bootDevice(t, { variant: 'P', dataDir, factoryWebroot })
  t.equal((await call(`${again.httpUrl}/`)).text, '<h1>owner</h1>', 'and after a power cycle')
  t.equal((await call(`${again.httpUrl}/api/system/version`)).json.uis, sha256(owners), 'uis is the owner app')
  t.same(
    (await upgrades(dataDir)).map(([result, source, , hash]) => [result, source, hash]),
    [
      [LogResult.OK, 'factory', sha256(factory)],
      [LogResult.OK, 200, sha256(owners)],
    ],
    'the factory install once, then the owner install',
  )
})

t.test('a factory image that does not verify is not installed; the device boots and works', async (t) => {
  const { root, factoryApp } = folders(t)
  const good = await appImage(factoryApp)
  const tampered = Buffer.from(good)
  const inPayload = tampered.length - 1100
  tampered.writeUInt8(tampered.readUInt8(inPayload) ^ 1, inPayload)
  const otherVendor = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  const payload = await packDirectory(factoryApp)
  const pem = await DEV_VENDOR_PEM
  const cases: [string, Buffer | undefined, RegExp][] = [
    ['a flipped payload byte', tampered, /^integrity: the payload does not match the signed hash/],
    ['a truncated image', good.subarray(0, good.length - 512), /^integrity: the image is \d+ bytes/],
    ["another vendor's key", await appImage(factoryApp, otherVendor), /^signature: /],
    [
      'a firmware image',
      buildImage({ kind: 'fw', hardware: ['P'], floor: 0, version: '1.0.0' }, payload, pem),
      /^kind:/,
    ],
    [
      'an image for E only',
      buildImage({ kind: 'ui', hardware: ['E'], floor: 0, version: '1.0.0' }, payload, pem),
      /^hardware:/,
    ],
    ['a missing file', undefined, /ENOENT/],
  ]
  for (const [what, bytes, why] of cases) {
    const name = what.replace(/\W+/g, '-')
    const factoryWebroot = join(root, `${name}.img`)
    if (bytes) await writeFile(factoryWebroot, bytes)
    const log = capturedLog()
    const device = await bootDevice(t, { variant: 'P', dataDir: join(root, name), factoryWebroot, logger: log.logger })
    t.equal((await call(`${device.httpUrl}/`)).status, 404, `${what}: / stays 404`)
    t.equal((await call(`${device.httpUrl}/api/system/status`)).json.fls_state, 0, `${what}: the device works`)
    t.same(await upgrades(device.dataDir), [], `${what}: nothing installed, nothing journaled`)
    t.equal(log.lines.length, 1, `${what}: one warning`)
    t.match(log.lines[0], { msg: /factory management app is not installed/, why }, `${what}: says why`)
    await device.stop()
  }

  // The store still has no app: a later start installs a good image, once.
  const dataDir = join(root, 'a-missing-file')
  const factoryWebroot = join(root, 'a-missing-file.img')
  await writeFile(factoryWebroot, good)
  const device = await bootDevice(t, { variant: 'P', dataDir, factoryWebroot })
  t.equal((await call(`${device.httpUrl}/`)).text, FACTORY_PAGE, 'a start that finds a good image installs it')
  t.same(await upgrades(dataDir), [[LogResult.OK, 'factory', 'ui', sha256(good)]])
})

t.test("--split: the upgrade service installs the build's own factory app, the gateway serves it", async (t) => {
  const separate = process.getuid?.() === 0 && SETPRIV
  // Under uid separation the service users must be let through every directory above the data dir.
  const parent = await mkdtemp(join(tmpdir(), 'hemd-factory-'))
  await chmod(parent, 0o711)
  t.teardown(() => rm(parent, { recursive: true, force: true }))
  const factoryWebroot = join(distDir, FACTORY_WEBROOT_IMAGE)
  const device = await bootDevice(t, {
    variant: 'P',
    dataDir: join(parent, 'device'),
    split: true,
    ...(separate ? { serviceUids: 62_000 } : {}),
    factoryWebroot,
  })
  if (separate) t.equal(device.uidSeparation, 'on', 'each service as its own user')
  const index = await call(`${device.httpUrl}/`)
  t.equal(index.status, 200, 'GET / serves the app')
  t.match(index.headers['content-security-policy'], /default-src 'self'/)
  t.equal((await call(`${device.httpUrl}/api/system/version`)).json.uis, sha256(await readFile(factoryWebroot)))
})

t.test('hemd on a fresh data dir serves the app its build ships at /', async (t) => {
  const data = join(t.testdir(), 'data')
  const hemd = await runHemd(t, ['--data', data])
  const index = await call(`${hemd.httpUrl}/`)
  t.equal(index.status, 200, 'GET / serves the management app')
  t.equal(index.headers['content-type'], 'text/html; charset=utf-8')
  t.match(index.headers['content-security-policy'], /default-src 'self'/)
  const shipped = await readFile(join(distDir, FACTORY_WEBROOT_IMAGE))
  t.equal((await call(`${hemd.httpUrl}/api/system/version`)).json.uis, sha256(shipped), 'the factory image of dist/')
  t.equal(await hemd.interrupt(), 0)
  t.same(await upgrades(data), [[LogResult.OK, 'factory', 'ui', sha256(shipped)]], 'journaled')
})
