// Model-based tests of the disk machine (P), Disk 0 and the encrypted Disk 1: every path
// generated from machines/disk.ts runs on its own device; after each step the journal holds
// exactly the step's TRANSITION record for that disk and the device shows the state: the disk's
// `status.storage` string, and what its NBD export serves (none while locked, read-only, writable).
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { TransmissionFlag } from '../actors/storage/nbd-protocol.js'
import { machineRegistry } from '../machines/registry.js'
import { type DiskNumber } from '../machines/disk.js'
import { bootDevice } from './helpers/device.js'
import { api, Tokens } from './helpers/keys.js'
import { status, wipeout } from './helpers/model-device.js'
import { checkCoverage, checkDrivers, modelPaths } from './helpers/model-paths.js'
import { checkObservations, walkPaths, type ModelRun } from './helpers/model-walk.js'
import { NbdTestClient } from './helpers/nbd-client.js'
import { personalise } from './helpers/owner.js'
import { until } from './helpers/until.js'

const { machine: diskMachine, version: diskVersion } = machineRegistry.disk

/** Disk 0 stays locked at power-up (bit 0 clear), so that a format is FORMATTED alone; Disk 1 under AES-XTS. */
const STORAGE_MODE = 0xa0

interface Disks {
  dataDir: string
  base: string
  nbd: string
  disk: DiskNumber
  /** The init token (system:config), until a reboot kills it. */
  owner?: string
  tokens?: Tokens
}

const scope = (d: Disks, rw: boolean) => `storage:disk${d.disk}${rw ? ':rw' : ''}`

/** The route answers 200 with the token for `scope`: the scope alone names the disk and, for `unlock`, the mode. */
async function storage(d: Disks, op: 'unlock' | 'lock', rw: boolean): Promise<void> {
  const answer = await api(`${d.base}/api/storage/${op}`, await d.tokens!.get(scope(d, rw)))
  if (answer.status !== 200) throw new Error(`${op} with ${scope(d, rw)}: ${answer.status} ${answer.text}`)
}

/** The disk's `status.storage` string shows `mode`; status follows the journal within moments. */
async function showsMode(t: Test, d: Disks, mode: '-' | 'ro' | 'rw'): Promise<void> {
  let shown: string | undefined
  await until(
    `storage ${mode}`,
    async () => (shown = (await status(d.base)).storage?.[d.disk])?.endsWith(`:${mode}`) === true,
    5000,
  ).catch(() => undefined)
  t.match(shown, new RegExp(`^[1-9]\\d*:${mode}$`), `status.storage[${d.disk}]: ${shown}`)
}

/** What the disk's NBD export offers: nothing while the disk is locked. */
async function exported(
  d: Disks,
  use: (client: NbdTestClient, flags: number | undefined) => Promise<void>,
): Promise<void> {
  const client = await NbdTestClient.connect(d.nbd)
  try {
    const go = await client.go(`disk${d.disk}`)
    await use(client, 'flags' in go ? go.flags : undefined)
  } finally {
    client.close()
  }
}

function makeRun(disk: DiskNumber): ModelRun<Disks> {
  return {
    spec: { machine: diskMachine, version: diskVersion, instance: String(disk) },
    input: { disk },
    async boot(t) {
      const device = await bootDevice(t, { dataDir: t.testdir(), nbd: { host: '127.0.0.1', port: 0 } })
      return { dataDir: device.dataDir, base: device.httpUrl!, nbd: device.nbdAddress!, disk }
    },
    drivers: {
      // The owner's personalisation formats both disks.
      FORMATTED: async (d) => {
        const init = await personalise(d.base, 'P', { storage_mode: STORAGE_MODE })
        if (init.status !== 200) throw new Error(`personalisation refused: ${init.status} ${init.text}`)
        d.owner = init.json.token as string
        d.tokens = new Tokens(d.base)
      },
      UNLOCK_RO: (d) => storage(d, 'unlock', false),
      UNLOCK_RW: (d) => storage(d, 'unlock', true),
      LOCK: (d) => storage(d, 'lock', false),
      ERASED: async (d) => {
        await wipeout(d.base, d.dataDir, d.owner!)
        d.owner = d.tokens = undefined
      },
    },
    observations: {
      unformatted: async (t, d) => {
        const shown = await status(d.base)
        t.equal(shown.inited, false, 'no owner: nothing formatted the disks')
        t.notOk('format' in shown, 'no format')
        await showsMode(t, d, '-')
        await exported(d, async (_, flags) => void t.equal(flags, undefined, 'no export'))
      },
      locked: async (t, d) => {
        t.equal((await status(d.base)).format, 'done', 'formatted')
        await showsMode(t, d, '-')
        await exported(d, async (_, flags) => void t.equal(flags, undefined, 'a locked disk is no export'))
      },
      ro: async (t, d) => {
        await showsMode(t, d, 'ro')
        await exported(d, async (client, flags) => {
          t.ok(flags! & TransmissionFlag.READ_ONLY, 'exported read-only')
          t.equal((await client.read(0, 512)).errno, 0, 'reads')
          t.not(await client.write(0, Buffer.alloc(512, 1)), 0, 'refuses a write')
        })
      },
      rw: async (t, d) => {
        await showsMode(t, d, 'rw')
        const sector = Buffer.alloc(512, `model ${d.disk} `)
        await exported(d, async (client, flags) => {
          t.equal(flags! & TransmissionFlag.READ_ONLY, 0, 'exported writable')
          t.equal(await client.write(512, sector), 0, 'takes a write')
          t.same((await client.read(512, 512)).data, sector, 'and reads it back')
        })
        const image = await open(join(d.dataDir, 'disks', `disk${d.disk}.img`))
        const stored = Buffer.alloc(512)
        await image.read(stored, 0, 512, 512).finally(() => image.close())
        t.equal(
          stored.equals(sector),
          d.disk === 0,
          d.disk === 0 ? 'Disk 0 stores the sector as written' : 'Disk 1 stores it encrypted',
        )
      },
    },
  }
}

for (const disk of [0, 1] as const) {
  const run = makeRun(disk)
  const drivable = Object.keys(run.drivers)
  const options = { input: { disk }, drivable }
  const paths = modelPaths(diskMachine, options)
  t.test(`Disk ${disk}: ${paths.length} paths, each on its own device`, async (t) => {
    checkDrivers(t, diskMachine, drivable, {})
    checkCoverage(t, diskMachine, paths, options)
    checkObservations(t, run)
    walkPaths(t, run, paths, 3)
  })
}

t.test('E has no disks: the storage routes answer 404', async (t) => {
  const device = await bootDevice(t, { variant: 'E', dataDir: t.testdir() })
  for (const op of ['unlock', 'lock'])
    t.equal((await api(`${device.httpUrl}/api/storage/${op}`, undefined)).status, 404, op)
})
