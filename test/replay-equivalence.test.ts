// Replay equivalence: a device driven through a long random scenario (keys, config,
// disks, management-app upgrades, faults, reboots, a wipeout), then its logs downloaded through
// the API and replayed offline: the state rebuilt from the journal must equal the live state,
// subsystem by subsystem, at the end and at every checkpoint of the way.
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { decode, encode } from '../protocol/codec.js'
import { Subjects } from '../protocol/subjects.js'
import type { StateEvent } from '../protocol/bus-messages.js'
import { sendSimCommand } from '../cli/hemd/sim-cli.js'
import type { Device } from '../runtime/types.js'
import type { UpgradeState } from '../protocol/upgrade-state.js'
import { fetchJournal, headClaim, replayDevice, type DeviceReplay } from '../audit/index.js'
import { FLS } from '../protocol/fail-state.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { api, createKey, Tokens } from './helpers/keys.js'
import { startNats } from './helpers/nats.js'
import { bearer, MASTER_PASS, login, ownerClient, personalise } from './helpers/owner.js'
import { until } from './helpers/until.js'
import { imageOf, upload } from './helpers/upload.js'

/** A seeded PRNG (mulberry32): the scenario is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = a
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const KEY_TYPES = ['AES256', 'AES128', 'ED25519', 'SECP256R1', 'CURVE25519']

interface Live {
  device: Device
  nc: NatsConnection
  tokens: Tokens
  /** Scenario knowledge the device cannot be asked for cheaply: which keys exist to pick from. */
  kids: string[]
}

async function readModel<S>(live: Live, service: string): Promise<S> {
  const reply = await live.nc.request(new Subjects(live.device.devid).command(service, 'state'), encode({}), {
    timeout: 5000,
  })
  return decode<StateEvent<S>>(reply.data).state
}

async function status(live: Live): Promise<Record<string, any>> {
  return (await call(`${live.device.httpUrl}/api/system/status`)).json
}

async function listedKeys(live: Live): Promise<Record<string, { type: string; created: number; updated: number }>> {
  const token = await live.tokens.get('keymgmt:list')
  const keys: Record<string, { type: string; created: number; updated: number }> = {}
  for (let offset = 0; ;) {
    const page = (await api(`${live.device.httpsUrl}/api/keymgmt/list/${offset}`, token)).json as {
      total: number
      listed: number
      list: { kid: string; type: string; created: number; updated: number }[]
    }
    for (const { kid, type, created, updated } of page.list) keys[kid] = { type, created, updated }
    offset += page.listed
    if (page.listed === 0 || offset >= page.total) return keys
  }
}

/** The disk machine's state as `status.storage` shows it (`<sectors>:<mode>`, `-` locked). */
const diskMode: Record<string, string> = { locked: '-', ro: 'ro', rw: 'rw' }

/** What the API and the read models show, in the shape the replay rebuilds. */
async function liveState(live: Live): Promise<Partial<DeviceReplay>> {
  const s = await status(live)
  // A config read issues a fresh `nonce` each time: not state.
  const { nonce: _, ...config } = (
    await api(`${live.device.httpUrl}/api/system/config`, await live.tokens.get('system:config'))
  ).json
  const upgrade = await readModel<UpgradeState>(live, 'upgrade')
  return {
    // A format not done (running, or failed until a boot runs it again) is personalisation's `formatting`.
    personalisation:
      s.inited === false ? 'fresh' : s.format !== undefined && s.format !== 'done' ? 'formatting' : 'personalised',
    health: { state: s.fls_state === 0 ? 'secure' : 'failed', fls: s.fls_state },
    upgrades: { fw: upgrade.fw, ui: upgrade.ui },
    disks: s.storage ? { '0': s.storage[0].split(':')[1], '1': s.storage[1].split(':')[1] } : undefined,
    keys: await listedKeys(live),
    config,
  }
}

async function replayed(live: Live): Promise<DeviceReplay> {
  const { files, head } = await fetchJournal(ownerClient(live.device.httpsUrl!))
  return replayDevice(files, live.device.logPublicKey, { allowOpenTail: true, heads: [headClaim(head)] })
}

/**
 * What the device shows once its projections agree: status reads read models that each service
 * publishes after it acts (the disks take their power-up mode just after the format shows done).
 */
async function settledState(live: Live): Promise<Partial<DeviceReplay>> {
  let last = JSON.stringify(await liveState(live))
  for (;;) {
    await sleep(100)
    const now = await liveState(live)
    if (JSON.stringify(now) === last) return now
    last = JSON.stringify(now)
  }
}

/** The replay, subsystem by subsystem, against what the device showed. */
function assertEquivalent(t: Test, replay: DeviceReplay, now: Partial<DeviceReplay>, when: string): void {
  t.equal(replay.variant, 'P', `${when}: variant`)
  t.equal(replay.personalisation, now.personalisation, `${when}: personalisation`)
  t.equal(replay.provisioning, 'unprovisioned', `${when}: provisioning (this device is never provisioned)`)
  t.same(replay.health, now.health, `${when}: health`)
  t.equal(replay.lifecycle, 'running', `${when}: lifecycle`)
  t.same(replay.upgrades, now.upgrades, `${when}: upgrades`)
  t.same(
    replay.disks && {
      '0': diskMode[replay.disks['0']] ?? replay.disks['0'],
      '1': diskMode[replay.disks['1']] ?? replay.disks['1'],
    },
    now.disks,
    `${when}: disks`,
  )
  t.same(replay.keys, now.keys, `${when}: keys (${Object.keys(now.keys!).length})`)
  const shown = now.config as unknown as Record<string, unknown>
  const rebuilt = replay.config as unknown as Record<string, unknown>
  t.same(Object.fromEntries(Object.keys(rebuilt).map((field) => [field, shown[field]])), rebuilt, `${when}: config`)
}

interface Checkpoint {
  when: string
  at: DeviceReplay['at']
  live: Partial<DeviceReplay>
}

/** Compares now, and keeps what the device showed with the journal position the replay reached. */
async function compare(t: Test, live: Live, checkpoints: Checkpoint[], when: string): Promise<void> {
  const now = await settledState(live)
  const replay = await replayed(live)
  assertEquivalent(t, replay, now, when)
  checkpoints.push({ when, at: replay.at, live: now })
}

type Action = (live: Live, random: () => number) => Promise<string>

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!

const actions: Record<string, { weight: number; run: Action }> = {
  'create a key': {
    weight: 5,
    run: async (live, random) => {
      const type = pick(random, KEY_TYPES)
      live.kids.push(
        await createKey(live.device.httpsUrl!, await live.tokens.get('keymgmt:gen'), {
          label: `k${live.kids.length}`,
          type,
        }),
      )
      return type
    },
  },
  'delete a key': {
    weight: 2,
    run: async (live, random) => {
      if (live.kids.length === 0) return 'none to delete'
      const kid = live.kids.splice(Math.floor(random() * live.kids.length), 1)[0]!
      const answer = await api(
        `${live.device.httpsUrl}/api/keymgmt/delete/${kid}`,
        await live.tokens.get('keymgmt:del'),
        undefined,
        'DELETE',
      )
      if (answer.status !== 200) throw new Error(`delete: ${answer.status} ${answer.text}`)
      return kid
    },
  },
  'relabel a key': {
    weight: 2,
    run: async (live, random) => {
      if (live.kids.length === 0) return 'none to relabel'
      const kid = pick(random, live.kids)
      const answer = await api(`${live.device.httpsUrl}/api/keymgmt/update`, await live.tokens.get('keymgmt:upd'), {
        kid,
        label: `r${Math.floor(random() * 1000)}`,
      })
      if (answer.status !== 200) throw new Error(`update: ${answer.status} ${answer.text}`)
      return kid
    },
  },
  'change the config': {
    weight: 3,
    run: async (live, random) => {
      const change = pick(random, [
        { email: `owner${Math.floor(random() * 100)}@example.com` },
        { allow_keysearch: random() < 0.5 },
        { ctx: Math.floor(random() * 1000) },
        { user: `User ${Math.floor(random() * 100)}` },
        { storage_mode: pick(random, [0x51, 0x53, 0xa1, 0x50]) },
      ])
      const answer = await api(
        `${live.device.httpUrl}/api/system/config`,
        await live.tokens.get('system:config'),
        change,
      )
      if (answer.status !== 200) throw new Error(`config: ${answer.status} ${answer.text}`)
      return JSON.stringify(change)
    },
  },
  'lock or unlock a disk': {
    weight: 4,
    run: async (live, random) => {
      const disk = pick(random, [0, 1])
      const op = pick(random, ['unlock/ro', 'unlock/rw', 'lock'])
      const answer = await api(
        `${live.device.httpUrl}/api/storage/${op}`,
        await live.tokens.get(`storage:disk${disk}:rw`),
      )
      if (answer.status !== 200) throw new Error(`storage ${op}: ${answer.status} ${answer.text}`)
      return `disk ${disk} ${op}`
    },
  },
  'upload a management app': {
    weight: 2,
    run: async (live, random) => {
      const token = await live.tokens.get('system:upgrade')
      const good = random() < 0.75
      const image = await imageOf(appDir, 'ui', '1.0.0', good ? ['P'] : ['E'])
      if ((await upload(live.device.httpUrl!, 'ui', image, {}, token)).status !== 200) throw new Error('upload refused')
      await until('checked', async () =>
        [200, 406].includes((await api(`${live.device.httpUrl}/api/system/upgrade/check_ui`, token)).status),
      )
      if (good && random() < 0.5) {
        const installed = await api(`${live.device.httpUrl}/api/system/upgrade/install_ui`, token)
        if (installed.status !== 200) throw new Error(`install: ${installed.status} ${installed.text}`)
        return 'installed'
      }
      return good ? 'verified' : 'rejected (E only)'
    },
  },
  'overheat and cool down': {
    weight: 1,
    run: async (live) => {
      await sendSimCommand(live.device.dataDir, { action: 'temperature', celsius: 95 })
      if ((await status(live)).fls_state !== FLS.TEMPERATURE) throw new Error('no temperature fault')
      await sendSimCommand(live.device.dataDir, { action: 'temperature', celsius: null })
      return 'fls 0x04 raised and cleared'
    },
  },
  reboot: {
    weight: 1,
    run: async (live) => {
      await live.device.restart()
      live.tokens = new Tokens(live.device.httpUrl!)
      return 'restarted'
    },
  },
}

const weighted = Object.entries(actions).flatMap(([name, { weight }]) => Array<string>(weight).fill(name))

let appDir = ''

t.test('a long random scenario on P: the replayed logs equal the live device at every checkpoint', async (t) => {
  const root = t.testdir({ data: {}, nats: {}, app: { 'index.html': '<!doctype html><title>app</title>' } })
  appDir = `${root}/app`
  const nats = await startNats(`${root}/nats`)
  t.teardown(() => nats.stop())
  const device = await bootDevice(t, { dataDir: `${root}/data`, variant: 'P', natsUrl: nats.url })
  const nc = await connect({ servers: nats.url })
  t.teardown(() => nc.close())
  const live: Live = { device, nc, tokens: new Tokens(device.httpUrl!), kids: [] }
  const checkpoints: Checkpoint[] = []

  const personalised = async () => {
    const init = await personalise(device.httpUrl!, 'P', {})
    if (init.status !== 200) throw new Error(`personalisation refused: ${init.status} ${init.text}`)
    await until('formatted', async () => (await status(live)).format === 'done')
  }
  await personalised()
  await compare(t, live, checkpoints, 'personalised')

  const random = prng(0x8e3d)
  const STEPS = 60
  for (let step = 1; step <= STEPS; step++) {
    const name = pick(random, weighted)
    const what = await actions[name]!.run(live, random)
    t.comment(`step ${step}: ${name}: ${what}`)
    if (step % 15 === 0) await compare(t, live, checkpoints, `after step ${step}`)
    if (step === 30) {
      // A wipeout returns config, keys and disks to the factory's, by the master's hand.
      const master = await login(device.httpUrl!, 'system:config', MASTER_PASS)
      t.equal((await api(`${device.httpUrl}/api/system/config`, master, { wipeout: true })).status, 200, 'wipeout')
      await until('fresh again', async () => (await status(live)).inited === false)
      await until(
        'the old tokens are dead',
        async () =>
          (
            await call(`${device.httpUrl}/api/system/config`, {
              headers: bearer(await live.tokens.get('system:config')),
            })
          ).status === 401,
      )
      live.kids = []
      await personalised()
      live.tokens = new Tokens(device.httpUrl!)
      await compare(t, live, checkpoints, 'wiped and personalised again')
    }
  }
  await compare(t, live, checkpoints, 'the end')

  // The final logs, replayed up to each checkpoint's position, tell what the device showed then.
  const { files, head } = await fetchJournal(ownerClient(device.httpsUrl!))
  for (const { when, at, live: then } of checkpoints) {
    assertEquivalent(
      t,
      replayDevice(files, device.logPublicKey, {
        allowOpenTail: true,
        heads: [headClaim(head)],
        at: { file: at.file, seq: at.seq },
      }),
      then,
      `--at ${at.file}:${at.seq} (${when})`,
    )
  }
})
