// Model-based tests of the personalisation machine, on P (fresh → formatting → personalised, by an
// init or a restore from a backup, and back to formatting for a new Disk 0 size) and on E (fresh → personalised):
// every path generated from machines/personalisation.ts runs on its own device; after each step the
// journal holds exactly the step's TRANSITION record and the device answers as the state says
// (status `inited` and `format`, the init challenge, login, the disks).
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Variant } from '../protocol/device.js'
import { machineRegistry } from '../machines/registry.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { api } from './helpers/keys.js'
import { status, wipeout } from './helpers/model-device.js'
import { checkCoverage, checkDrivers, modelPaths } from './helpers/model-paths.js'
import { checkObservations, nextEvent, walkPaths, type ModelRun } from './helpers/model-walk.js'
import { login, loginAnswer, personalise } from './helpers/owner.js'
import { madeBackup, restoreWith, uploadBackup } from './helpers/backup.js'
import { until } from './helpers/until.js'

const { machine: personalisationMachine, version: personalisationVersion } = machineRegistry.personalisation
/** One backup file per variant, made on first use (its owner's keys take a PBKDF2 run each). */
const backups: Partial<Record<Variant, Promise<Uint8Array>>> = {}

interface Owner {
  dataDir: string
  base: string
  https: string
  /** The init token (system:config), until a reboot kills it. */
  token?: string
  /** The format was made to fail, so that the device stays in `formatting`. */
  stalled: boolean
}

/**
 * Disk 0's image taken by a directory: the sim HAL's format fails, as on a broken card, and nothing finishes
 * personalisation until a reboot resumes it.
 */
async function stallFormat(d: Owner): Promise<void> {
  const image = join(d.dataDir, 'disks', 'disk0.img')
  await rm(image, { force: true })
  await mkdir(image, { recursive: true })
  d.stalled = true
}

/** A Disk 0 size other than the owner's (defaultCfg's 131072 sectors): a reformat. */
const RESIZED_DISK0 = 196608

function makeRun(variant: Variant): ModelRun<Owner> {
  return {
    spec: { machine: personalisationMachine, version: personalisationVersion },
    input: { variant },
    async boot(t) {
      const device = await bootDevice(t, { variant, dataDir: t.testdir() })
      return { dataDir: device.dataDir, base: device.httpUrl!, https: device.httpsUrl!, stalled: false }
    },
    drivers: {
      PERSONALISE: async (d, walk) => {
        // A format left to run ends within moments: only where the path finishes it does it run.
        if (variant === 'P' && nextEvent(walk) !== 'FORMAT_DONE') await stallFormat(d)
        const init = await personalise(d.base, variant)
        if (init.status !== 200) throw new Error(`personalisation refused: ${init.status} ${init.text}`)
        d.token = init.json.token as string
      },
      // A restore from a backup (docs/backup.md) makes the file's owner the device's, as a personalisation does.
      RESTORE: async (d, walk) => {
        if (variant === 'P' && nextEvent(walk) !== 'FORMAT_DONE') await stallFormat(d)
        const staged = await uploadBackup(d.https, await (backups[variant] ??= madeBackup(variant)))
        if (staged.status !== 200) throw new Error(`upload refused: ${staged.status} ${staged.text}`)
        const restored = await restoreWith(d.https)
        if (restored.status !== 200) throw new Error(`restore refused: ${restored.status} ${restored.text}`)
        d.token = await login(d.base, 'system:config')
      },
      // The device finishes the format it started on its own.
      FORMAT_DONE: async () => undefined,
      REFORMAT: async (d, walk) => {
        if (nextEvent(walk) !== 'FORMAT_DONE') await stallFormat(d)
        const resized = await api(`${d.base}/api/system/config`, d.token!, { storage_disk0size: RESIZED_DISK0 })
        if (resized.status !== 200) throw new Error(`a new Disk 0 size refused: ${resized.status} ${resized.text}`)
      },
      WIPEOUT: async (d) => {
        await wipeout(d.base, d.dataDir, d.token!)
        d.token = undefined
        d.stalled = false
      },
    },
    transient: ['formatting'],
    observations: {
      fresh: async (t, d) => {
        const shown = await status(d.base)
        t.equal(shown.inited, false, 'status.inited: false')
        t.notOk('format' in shown, 'no format')
        const challenge = await call(`${d.base}/api/auth/init`)
        t.match(
          challenge,
          { status: 200, json: { spk: String, jti: String, eid: String } },
          'the init challenge is offered',
        )
        t.equal('genuine' in challenge.json, variant === 'P', 'with `genuine` on P only')
        t.match(
          await call(`${d.base}/api/auth/token`),
          { status: 409, json: { error: 'not_personalised' } },
          'no login before personalisation',
        )
      },
      formatting: async (t, d, walk) => {
        const shown = await status(d.base)
        t.notOk('inited' in shown, 'no `inited`: the owner is set')
        await refusesSecondInit(t, d)
        if (!d.stalled) {
          t.match(shown.format, /^status\d+$|^done$/, `the format runs (or has just ended): ${shown.format}`)
          return
        }
        // The format gives up a moment after it started.
        let format = shown.format
        await until('the format ends', async () => !/^status/.test((format = (await status(d.base)).format))).catch(
          () => undefined,
        )
        t.equal(format, 'failed', 'status.format: failed')
        // An owner's token reaches the disks, which have no layout yet.
        const disk = await api(`${d.base}/api/storage/unlock`, (await loginAnswer(d.base, 'storage:disk0')).json?.token)
        t.match(
          disk,
          { status: 409, json: { error: 'not_formatted' } },
          `unlocking Disk 0: 409 not_formatted (${nextEvent(walk) ?? 'end'})`,
        )
        // Until a boot formats them, the disks take no other size.
        t.match(
          await api(`${d.base}/api/system/config`, d.token!, { storage_disk0size: RESIZED_DISK0 + 65536 }),
          { status: 409, json: { error: 'formatting' } },
          'a new Disk 0 size: 409 formatting',
        )
      },
      personalised: async (t, d) => {
        // Status learns of the format's end over the bus, a moment after the journal holds FORMAT_DONE.
        let shown = await status(d.base)
        if (variant === 'P')
          await until(
            'status shows the format done',
            async () => (shown = await status(d.base)).format === 'done',
          ).catch(() => undefined)
        t.notOk('inited' in shown, 'no `inited`')
        t.equal(
          shown.format,
          variant === 'P' ? 'done' : undefined,
          variant === 'P' ? 'status.format: done' : 'no format on E',
        )
        await refusesSecondInit(t, d)
        t.equal((await loginAnswer(d.base, 'system:config')).status, 200, 'the owner logs in')
      },
    },
  }
}

async function refusesSecondInit(t: Test, d: Owner): Promise<void> {
  t.match(
    await call(`${d.base}/api/auth/init`),
    { status: 406, json: { error: 'already_personalised' } },
    'GET init: 406 already_personalised',
  )
  const again = await call(`${d.base}/api/auth/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ init: 'a.b.c' }),
  })
  t.match(again, { status: 406, json: { error: 'already_personalised' } }, 'a second init: 406 already_personalised')
}

const UNDRIVABLE: Record<Variant, Record<string, string>> = {
  P: {},
  E: {
    FORMAT_DONE: 'E has no disks to format: personalisation ends at once',
    REFORMAT: 'E has no disks: storage_disk0size is refused (400)',
  },
}

const UNREACHED: Record<Variant, Record<string, string>> = {
  P: {},
  E: { formatting: 'E has no disks: a personalisation goes straight to personalised' },
}

for (const variant of ['P', 'E'] as const) {
  const run = makeRun(variant)
  const drivable = Object.keys(run.drivers).filter((event) => !(event in UNDRIVABLE[variant]))
  const options = { input: { variant }, drivable }
  const paths = modelPaths(personalisationMachine, options)
  t.test(`${variant}: ${paths.length} paths, each on its own device`, async (t) => {
    checkDrivers(t, personalisationMachine, drivable, UNDRIVABLE[variant])
    checkCoverage(t, personalisationMachine, paths, options, UNREACHED[variant])
    checkObservations(t, run)
    walkPaths(t, run, paths, 3)
  })
}
