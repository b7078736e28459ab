// Model-based tests of the upgrade machine, both pipelines: the management app ('ui', on
// P) and the firmware ('fw', on E). Every path generated from machines/upgrade.ts runs on its own
// device; after each step the journal holds exactly the step's TRANSITION record and the device
// answers as the state says: the check and install codes, what is staged, what runs.
import { createHash, generateKeyPairSync } from 'node:crypto'
import { cp, readFile, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { signBuild } from '../image/firmware-manifest.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { buildImage, packDirectory } from '../image/index.js'
import { machineRegistry } from '../machines/registry.js'
import type { UpgradeKind } from '../machines/upgrade.js'
import { bootDevice, distDir, freePort } from './helpers/device.js'
import { call, jsonOrUndefined, type Answer } from './helpers/http.js'
import { runHemd } from './helpers/hemd-process.js'
import { readJournal } from './helpers/journal.js'
import {
  checkCoverage,
  checkDrivers,
  journaledTransitions,
  modelPaths,
  type PathOptions,
} from './helpers/model-paths.js'
import { checkObservations, nextEvent, walkPaths, type ModelRun, type Walk } from './helpers/model-walk.js'
import { until } from './helpers/until.js'
import { DEV_VENDOR_PEM, firmwareImage, imageOf, upload } from './helpers/upload.js'

const { machine: upgradeMachine, version: upgradeVersion } = machineRegistry.upgrade

/** The events that happen across a reboot into installed firmware: only hemd's launcher does that. */
const REBOOTS = ['TRIAL_BOOT', 'CONFIRMED', 'ROLLED_BACK']
const NEW_FIRMWARE = '0.9.0-model'

const root = t.testdir({
  app: { 'index.html': '<h1>model</h1>' },
  work: {},
})

const once = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let made: Promise<T> | undefined
  return () => (made ??= make())
}

type ImageRole = 'good' | 'foreign' | 'uninstallable' | 'broken'

const stranger = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
const foreign = (kind: UpgradeKind) => async () =>
  buildImage(
    { kind, hardware: ['P', 'E'], floor: 0, version: 'model' },
    await packDirectory(join(root, 'app')),
    stranger,
  )

const app = once(() => imageOf(join(root, 'app'), 'ui', 'model', ['P']))

const images: Record<UpgradeKind, Partial<Record<ImageRole, () => Promise<Buffer>>>> = {
  ui: {
    good: app,
    foreign: once(foreign('ui')),
    // A ui image that passes its check always unpacks (the check walks the very archive the
    // install extracts): its staged bytes are changed under the device before the install instead.
    uninstallable: app,
  },
  fw: {
    good: once(async () => {
      const out = join(root, 'work', 'good.bin')
      if ((await firmwareImage(out, NEW_FIRMWARE)) !== 0) throw new Error('hem-image build failed')
      return readFile(out)
    }),
    foreign: once(foreign('fw')),
    // Signed and well formed, but no build: the install refuses what the bootloader could not run.
    uninstallable: once(() => imageOf(join(root, 'app'), 'fw', NEW_FIRMWARE, ['E'])),
    // A build that passes every check and cannot start.
    broken: once(async () => {
      const dir = join(root, 'work', 'broken')
      await cp(distDir, dir, { recursive: true })
      await writeFile(join(dir, 'bin', 'hemd.js'), 'process.exit(3)\n')
      await signBuild(dir, '0.9.1-broken', await DEV_VENDOR_PEM)
      return buildImage(
        { kind: 'fw', hardware: ['P', 'E'], floor: 0, version: '0.9.1-broken' },
        await packDirectory(dir),
        await DEV_VENDOR_PEM,
      )
    }),
  },
}

function image(kind: UpgradeKind, role: ImageRole): Promise<Buffer> {
  const make = images[kind][role]
  if (!make) throw new Error(`no ${role} ${kind} image`)
  return make()
}

/** What the upload must be for the path to go where it goes: the check and the install are decided by the bytes. */
function roleFor(walk: Walk): ImageRole {
  for (const { event } of walk.path.steps.slice(walk.index + 1)) {
    if (event === 'UPLOAD_STARTED') break
    if (event === 'CHECK_FAILED') return 'foreign'
    if (event === 'INSTALL_FAILED') return 'uninstallable'
  }
  return 'good'
}

interface HeldUpload {
  finish(): Promise<Answer>
  cut(): void
}

/**
 * An upload held after its first bytes, so that the device stays `receiving` until the path
 * finishes it or cuts the connection (`upload` in helpers/upload.ts cannot drop its socket).
 */
function heldUpload(base: string, kind: UpgradeKind, bytes: Buffer): HeldUpload {
  const head = 1000
  const req = request(`${base}/api/system/upgrade/upload_${kind}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename="${kind === 'fw' ? 'firmware.bin' : 'webroot.tar'}"`,
      'content-length': String(bytes.length),
    },
  })
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('error', reject)
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, json: jsonOrUndefined(text) }))
    })
  })
  answer.catch(() => undefined)
  req.write(bytes.subarray(0, head))
  return {
    finish: () => {
      req.end(bytes.subarray(head))
      return answer
    },
    cut: () => void req.destroy(),
  }
}

interface Pipeline {
  kind: UpgradeKind
  dataDir: string
  base: string
  /** The firmware the device booted with. */
  factory: string
  held?: HeldUpload
  /** The bytes of the upload under way, or staged. */
  staged?: Buffer
  install?: Promise<Answer>
  installed?: Buffer
}

const url = (p: Pipeline, op: 'check' | 'install') => `${p.base}/api/system/upgrade/${op}_${p.kind}`

/** Drivers throw on an answer the step does not expect: the path cannot go on from there. */
async function expectAnswer(
  what: string,
  answer: Promise<{ status: number; json?: any }> | undefined,
  status: number,
  body: Record<string, unknown> = {},
): Promise<void> {
  const got = await answer
  if (
    got?.status !== status ||
    Object.entries(body).some(([k, v]) => (v instanceof RegExp ? !v.test(String(got.json?.[k])) : got.json?.[k] !== v))
  ) {
    throw new Error(
      `${what}: ${got?.status} ${JSON.stringify(got?.json)}, not ${status} ${String(Object.values(body))}`,
    )
  }
}

/** Polls the check until the background check ends. */
async function checkEnds(p: Pipeline, status: number, body?: Record<string, unknown>): Promise<void> {
  let answer!: Answer
  await until('the check ends', async () => (answer = await call(url(p, 'check'))).status !== 202)
  await expectAnswer('the check', Promise.resolve(answer), status, body)
}

const records = (p: Pipeline) => journaledTransitions(p.dataDir, { machine: upgradeMachine, instance: p.kind })
const startups = async (p: Pipeline) =>
  (await readJournal(p.dataDir)).records.filter((r) => r.type === LogType.STARTUP).length
const fwv = async (base: string) => (await call(`${base}/api/system/version`)).json.fwv as string

/** hemd with its launcher, which boots installed firmware (a trial) and rolls back what does not confirm. */
async function launched(t: Test): Promise<{ dataDir: string; base: string }> {
  const dataDir = join(t.testdir(), 'data')
  const [http, https] = [await freePort(), await freePort()]
  await runHemd(t, [
    '--data',
    dataDir,
    '--variant',
    'E',
    '--http',
    `127.0.0.1:${http}`,
    '--https',
    `127.0.0.1:${https}`,
  ])
  return { dataDir, base: `http://127.0.0.1:${http}` }
}

async function inProcess(t: Test, kind: UpgradeKind): Promise<{ dataDir: string; base: string }> {
  const device = await bootDevice(t, { variant: kind === 'ui' ? 'P' : 'E', dataDir: t.testdir() })
  return { dataDir: device.dataDir, base: device.httpUrl! }
}

/** Until a boot after `boots` journaled its start and answers. */
async function rebooted(p: Pipeline, boots: number): Promise<void> {
  await until(
    'rebooted',
    async () => (await startups(p)) > boots && (await call(`${p.base}/api/system/status`)).status === 200,
    60_000,
  )
}

/**
 * The preparation of a path that starts in a boot of new firmware: upload, check and install
 * it, in the boot before. Those records are not the path's: the machine starts again at this boot.
 */
async function installAndReboot(p: Pipeline, walk: Walk, role: ImageRole): Promise<void> {
  const bytes = await image(p.kind, role)
  await expectAnswer('upload', upload(p.base, p.kind, bytes), 200)
  await expectAnswer('check', call(url(p, 'check')), 201)
  await checkEnds(p, 200)
  const boots = await startups(p)
  await expectAnswer('install', call(url(p, 'install')), 200)
  await rebooted(p, boots)
  walk.since = (await records(p)).findLastIndex((r) => r.to === 'installed') + 1
}

function makeRun(kind: UpgradeKind): ModelRun<Pipeline> {
  return {
    spec: { machine: upgradeMachine, version: upgradeVersion, instance: kind },
    input: { kind },
    stepMs: 60_000,
    transient: ['checking', 'installing', 'confirming'],
    async boot(t, path) {
      const { dataDir, base } = REBOOTS.includes(path.steps[0]!.event) ? await launched(t) : await inProcess(t, kind)
      const p: Pipeline = { kind, dataDir, base, factory: await fwv(base) }
      t.teardown(() => p.held?.cut())
      return p
    },
    drivers: {
      UPLOAD_STARTED: async (p, walk) => {
        p.staged = await image(kind, roleFor(walk))
        p.held = heldUpload(p.base, kind, p.staged)
      },
      UPLOAD_FINISHED: async (p) => {
        await expectAnswer('upload', p.held?.finish(), 200)
        p.held = undefined
      },
      UPLOAD_FAILED: async (p) => {
        p.held?.cut()
        p.held = p.staged = undefined
      },
      CHECK_STARTED: (p) => expectAnswer('check', call(url(p, 'check')), 201),
      CHECK_PASSED: (p) => checkEnds(p, 200),
      CHECK_FAILED: (p) => checkEnds(p, 406, { error: 'rejected', message: /^signature/ }),
      // Answered only once the install has ended: the next step waits for the answer.
      INSTALL_STARTED: async (p, walk) => {
        if (kind === 'ui' && nextEvent(walk) === 'INSTALL_FAILED') p.staged = await tamperStaged(p)
        p.install = call(url(p, 'install'))
      },
      INSTALL_FINISHED: async (p) => {
        const boots = await startups(p)
        await expectAnswer('install', p.install, 200)
        p.installed = p.staged
        p.staged = undefined
        // Without hemd's launcher the device restarts in place; the trial waits for the next start of hemd.
        if (kind === 'fw') await rebooted(p, boots)
      },
      INSTALL_FAILED: (p) =>
        kind === 'ui'
          ? expectAnswer('install', p.install, 406, { error: 'not_verified', message: /changed after its check/ })
          : expectAnswer('install', p.install, 406, { error: 'not_verified', message: /no bootable build/ }),
      TRIAL_BOOT: (p, walk) => installAndReboot(p, walk, 'good'),
      // The launcher has the trial confirm its health as soon as it is up.
      CONFIRMED: async () => undefined,
      ROLLED_BACK: (p, walk) => installAndReboot(p, walk, 'broken'),
    },
    observations,
  }
}

async function notVerified(t: Test, p: Pipeline): Promise<void> {
  t.match(await call(url(p, 'install')), { status: 406, json: { error: 'not_verified' } }, 'install: 406 not_verified')
}

async function checkAnswers(t: Test, p: Pipeline, status: number, json?: Record<string, unknown>): Promise<void> {
  t.match(await call(url(p, 'check')), { status, ...(json ? { json } : {}) }, `check: ${status}`)
}

/** `<data>/upgrade/<kind>.img`, the sim HAL's staging slot. */
const stagingSlot = (p: Pipeline) => join(p.dataDir, 'upgrade', `${p.kind}.img`)

/** Flips the last byte of the staged image's payload, as an attacker with the data disk could. */
async function tamperStaged(p: Pipeline): Promise<Buffer> {
  const bytes = await readFile(stagingSlot(p))
  bytes[bytes.length - 1]! ^= 0x01
  await writeFile(stagingSlot(p), bytes)
  return bytes
}

async function staged(t: Test, p: Pipeline, bytes: Buffer | undefined): Promise<void> {
  const held = await readFile(stagingSlot(p)).catch(() => undefined)
  t.ok(bytes ? held?.equals(bytes) : held === undefined, bytes ? 'the uploaded bytes are staged' : 'nothing is staged')
}

const observations: ModelRun<Pipeline>['observations'] = {
  idle: async (t, p) => {
    await checkAnswers(t, p, 404, { error: 'not_uploaded' })
    await notVerified(t, p)
    await staged(t, p, undefined)
  },
  receiving: async (t, p) => {
    await checkAnswers(t, p, 404, { error: 'not_uploaded' })
    t.match(
      await upload(p.base, p.kind, p.staged!),
      { status: 409, json: { error: 'busy' } },
      'a second upload waits its turn',
    )
    await notVerified(t, p)
  },
  // A check would start here: the install's refusal and the staged bytes show the state.
  uploaded: async (t, p) => {
    await notVerified(t, p)
    await staged(t, p, p.staged)
  },
  // The device may have finished the check already: then it answers as the path's next state.
  checking: async (t, p, walk) => {
    const status = (await call(url(p, 'check'))).status
    t.ok(
      [202, nextEvent(walk) === 'CHECK_PASSED' ? 200 : 406].includes(status),
      `check: 202, or the check's end (${status})`,
    )
  },
  verified: async (t, p) => {
    await checkAnswers(t, p, 200)
    await staged(t, p, p.staged)
  },
  rejected: async (t, p) => {
    await checkAnswers(t, p, 406, { error: 'rejected', message: /^signature/ })
    await notVerified(t, p)
    await staged(t, p, p.staged)
  },
  // The install runs within its request; if it has ended already, the check answers as the next state.
  installing: async (t, p, walk) => {
    const status = (await call(url(p, 'check')).catch(() => undefined))?.status
    const ended = nextEvent(walk) === 'INSTALL_FAILED' ? [] : p.kind === 'ui' ? [404] : [404, 503, undefined]
    t.ok([200, ...ended].includes(status), `check: 200 while installing, or the install's end (${status})`)
  },
  installed: async (t, p) => {
    await checkAnswers(t, p, 404, { error: 'not_uploaded' })
    await notVerified(t, p)
    await staged(t, p, undefined)
    if (p.kind === 'ui') {
      t.equal(
        (await call(`${p.base}/api/system/version`)).json.uis,
        createHash('sha256').update(p.installed!).digest('hex'),
        'version.uis is the image hash',
      )
      t.match(await call(`${p.base}/`), { status: 200, text: '<h1>model</h1>' }, 'the app is served')
    } else {
      t.match(
        JSON.parse(await readFile(join(p.dataDir, 'boot', 'slots.json'), 'utf8')),
        { trial: { version: NEW_FIRMWARE } },
        'a trial boot of the new firmware is armed',
      )
      t.equal(await fwv(p.base), p.factory, 'for the next start of hemd: the old firmware still runs')
    }
  },
  confirming: async (t, p) => {
    t.equal(await fwv(p.base), NEW_FIRMWARE, 'the trial runs the new firmware')
  },
  committed: async (t, p) => {
    t.equal(await fwv(p.base), NEW_FIRMWARE, 'the new firmware runs')
    // Status is a projection: the upgrade service publishes the commit just after it journals it.
    const upgraded = async () => (await call(`${p.base}/api/system/status`)).json.fw_upgrade === true
    await until('status.fw_upgrade', upgraded, 5000).catch(() => undefined)
    t.ok(await upgraded(), 'status.fw_upgrade')
    await checkAnswers(t, p, 404, { error: 'not_uploaded' })
  },
  rolled_back: async (t, p) => {
    t.equal(await fwv(p.base), p.factory, 'the old firmware runs again')
    t.notOk('fw_upgrade' in (await call(`${p.base}/api/system/status`)).json, 'no fw_upgrade')
    await checkAnswers(t, p, 404, { error: 'not_uploaded' })
    const { records } = await readJournal(p.dataDir)
    t.match(
      records.filter((r) => r.type === LogType.UPGRADE).at(-1),
      { result: LogResult.ERROR, decoded: { source: 'rollback', version: '0.9.1-broken' } },
      'the rollback is journaled',
    )
  },
}

// The app installs in place: no reboot, so no trial of it to confirm or roll back.
const UI_UNDRIVABLE = Object.fromEntries(
  REBOOTS.map((event) => [event, 'the management app installs without a reboot: it has no trial boot']),
)

/** The states only a reboot into new firmware reaches. */
const UI_UNREACHED = Object.fromEntries(
  ['confirming', 'committed', 'rolled_back'].map((state) => [state, 'the management app has no trial boot']),
)

function optionsOf(kind: UpgradeKind, drivable: string[]): PathOptions {
  return {
    input: { kind },
    drivable,
    // The context (the check's outcome, the trial's confirmation) is data the states already tell apart.
    byStateName: true,
    // Each path that starts with a reboot is a hemd process, its installs and reboots (~10 s): the
    // extended shortest paths already take every transition of the trial (idle → confirming →
    // committed, idle → rolled_back, and an upload from each), so simple paths stop at three steps,
    // where they add no second path through a reboot.
    maxSteps: 3,
    // An installed firmware reboots the device at once: nothing happens in `installed` before the machine starts again.
    filter: (snapshot) => !(kind === 'fw' && snapshot.value === 'installed'),
  }
}

for (const kind of ['ui', 'fw'] as const) {
  const run = makeRun(kind)
  const drivable = Object.keys(run.drivers).filter((event) => kind === 'fw' || !REBOOTS.includes(event))
  const options = optionsOf(kind, drivable)
  const paths = modelPaths(upgradeMachine, options)
  t.test(`${kind}: ${paths.length} paths, each on its own device`, async (t) => {
    checkDrivers(t, upgradeMachine, drivable, kind === 'ui' ? UI_UNDRIVABLE : {})
    checkCoverage(t, upgradeMachine, paths, options, kind === 'ui' ? UI_UNREACHED : {})
    checkObservations(t, run)
    walkPaths(t, run, paths, 3)
  })
}
