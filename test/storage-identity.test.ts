// The storage actor follows the auth actor's read model: the disks serve only once formatted and
// personalised, Disk 0 powers up as `storage_mode` says, and a wipeout (`inited` false) makes both
// unformatted again. Real bus, real P HAL, scripted identity.
import t, { type Test } from 'tap'
import type { IdentityState } from '../protocol/identity-state.js'
import type { CommandReply } from '../protocol/bus-messages.js'
import { StorageActor } from '../actors/storage/storage-actor.js'
import type { NbdListen } from '../actors/storage/nbd-server.js'
import type { StorageState } from '../protocol/storage-state.js'
import { LogType, type TransitionData } from '../protocol/journal.js'
import { BusUnavailableError } from '../bus/errors.js'
import { silentLogger } from './helpers/logger.js'
import { NbdTestClient } from './helpers/nbd-client.js'
import { identity as scriptedState, scriptedBearer, scriptedIdentity } from './helpers/scripted-identity.js'
import { until } from './helpers/until.js'

const OPS = ['unlock', 'unlock_ro', 'unlock_rw', 'lock'] as const

function identity(inited: boolean, storage_mode: number, extra: Partial<IdentityState> = {}): IdentityState {
  return scriptedState(inited, { storage_mode, ...extra })
}

async function setup(t: Test, storageMode: number, nbd?: NbdListen) {
  const { hal, connect, auth, journal, journaled, gatewayView } = await scriptedIdentity(
    t,
    'P',
    identity(true, storageMode),
  )
  let journaling = true
  const storage = new StorageActor({
    nc: await connect('storage'),
    hal,
    journal: {
      append: (entries) =>
        journaling ? journal.append(entries) : Promise.reject(new BusUnavailableError('the journal is out of reach')),
      status: () => journal.status(),
      head: () => journal.head(),
    },
    logger: silentLogger,
    ...(nbd ? { nbd } : {}),
  })
  await storage.start()
  t.teardown(() => storage.stop())
  const gateway = await gatewayView(['storage'])
  await gateway.whenReady()

  let rids = 0
  const request = (op: string, scope: string) =>
    gateway.request('storage', op, { rid: `r${++rids}`, tls: true, bearer: scriptedBearer('U', scope), body: {} })
  const shown = () => gateway.readModel<StorageState>('storage')?.storage
  const modes = () => shown()?.map((s) => s.split(':')[1])
  const showing = (what: string, expected: [string, string]) =>
    until(what, () => JSON.stringify(modes()) === JSON.stringify(expected))
  const transitions = () =>
    journaled.filter((e) => e.type === LogType.TRANSITION).map((e) => e.data as unknown as TransitionData)
  const setJournaling = (on: boolean) => void (journaling = on)
  return { hal, auth, storage, journaled, request, shown, showing, transitions, setJournaling }
}

const errorOf = (reply: CommandReply) => (reply.body as { error?: string } | undefined)?.error

t.test('no disk before the format; then storage_mode decides Disk 0; a wipeout unformats both', async (t) => {
  const { hal, auth, journaled, request, shown, showing, transitions } = await setup(t, 0x53)
  const { disk0Sectors, disk1Sectors } = hal.storage

  // Personalised but never formatted: the read model shows the card's default sizes, both locked.
  t.same(shown(), [`${disk0Sectors}:-`, `${disk1Sectors}:-`])
  for (const op of OPS) {
    for (const scope of ['storage:disk0', 'storage:disk0:rw', 'storage:disk1', 'storage:disk1:rw']) {
      const reply = await request(op, scope)
      t.equal(reply.status, 409, `${op} ${scope}: 409 while unformatted`)
      t.equal(errorOf(reply), 'not_formatted')
    }
  }
  // The scope check comes first: a disk this device does not have is 406 even while unformatted.
  const missing = await request('unlock', 'storage:disk7')
  t.equal(missing.status, 406, 'storage:disk7: 406')
  t.equal(errorOf(missing), 'bad_disk')
  t.same(journaled, [], 'refused ops journal nothing')
  // A scope that is no storage scope at all is the service's own 403, journaled as the gateway's would be.
  const foreign = await request('unlock', 'system:config')
  t.equal(foreign.status, 403, 'system:config: 403')
  t.equal(errorOf(foreign), 'forbidden')
  t.match(journaled.splice(0), [{ type: LogType.FAILED_SCOPE_CHECK, subject: 'U', data: { scope: 'system:config' } }])
  t.same(shown(), [`${disk0Sectors}:-`, `${disk1Sectors}:-`], 'refused ops change nothing')

  await hal.disks!.format(disk0Sectors, () => undefined)
  auth.publishState(identity(true, 0x53))
  await showing('formatted, Disk 0 up read-write', ['rw', '-'])
  t.same(shown(), [`${disk0Sectors}:rw`, `${disk1Sectors}:-`])
  t.same(
    transitions().map(({ machine, instance, from, to, event }) => ({ machine, instance, from, to, event })),
    [
      { machine: 'disk', instance: '0', from: 'unformatted', to: 'locked', event: 'FORMATTED' },
      { machine: 'disk', instance: '0', from: 'locked', to: 'rw', event: 'UNLOCK_RW' },
      { machine: 'disk', instance: '1', from: 'unformatted', to: 'locked', event: 'FORMATTED' },
    ],
  )
  t.notOk(
    journaled.some((e) => e.subject !== undefined),
    "the power-up transitions are nobody's request",
  )

  const unlocked = await request('unlock', 'storage:disk1')
  t.equal(unlocked.status, 200, 'Disk 1 unlocks once formatted')
  await showing('Disk 1 read-only', ['rw', 'ro'])
  t.match(journaled.at(-1), {
    type: LogType.TRANSITION,
    subject: 'U',
    data: { machine: 'disk', instance: '1', from: 'locked', to: 'ro', event: 'UNLOCK_RO' },
  })
  t.equal((await request('unlock', 'storage:disk7')).status, 406, 'still 406 for a disk the device lacks')
  t.equal((await request('lock', 'system:config')).status, 403, 'a scope for no disk at all: 403')

  const before = journaled.length
  auth.publishState(identity(false, 0x53))
  await showing('the wipeout unformats both', ['-', '-'])
  t.same(
    transitions()
      .slice(-2)
      .map(({ instance, from, to, event }) => ({ instance, from, to, event })),
    [
      { instance: '0', from: 'rw', to: 'unformatted', event: 'ERASED' },
      { instance: '1', from: 'ro', to: 'unformatted', event: 'ERASED' },
    ],
  )
  t.equal(journaled.length, before + 2)
  for (const op of OPS) {
    const reply = await request(op, 'storage:disk1')
    t.equal(reply.status, 409, `${op} after the wipeout: 409`)
    t.equal(errorOf(reply), 'not_formatted')
  }
  t.equal(journaled.length, before + 2, 'refused ops journal nothing')
})

t.test('Disk 0 powers up as storage_mode bits 0–1 say; Disk 1 always locked', async (t) => {
  const { hal, auth, request, shown, showing } = await setup(t, 0x51)
  await hal.disks!.format(hal.storage.disk0Sectors, () => undefined)
  const cases: [number, string][] = [
    [0x51, 'ro'],
    [0x53, 'rw'],
    [0x50, '-'],
    [0xa1, 'ro'],
    [0xa3, 'rw'],
    [0xa0, '-'],
    // Writable means nothing unless visible.
    [0x52, '-'],
  ]
  for (const [mode, disk0] of cases) {
    auth.publishState(identity(false, mode))
    await showing('unformatted', ['-', '-'])
    t.equal((await request('lock', 'storage:disk0')).status, 409)
    auth.publishState(identity(true, mode))
    // The 200 proves the disk is formatted again, so the modes below are the power-up ones.
    await until(
      `formatted under 0x${mode.toString(16)}`,
      async () => (await request('lock', 'storage:disk1')).status === 200,
    )
    t.same(
      shown()?.map((s) => s.split(':')[1]),
      [disk0, '-'],
      `storage_mode 0x${mode.toString(16)}: Disk 0 ${disk0}`,
    )
    // Both cipher nibbles (0x5 CTR, 0xA XTS) must give Disk 1 a cipher it opens under.
    t.equal((await request('unlock_rw', 'storage:disk1:rw')).status, 200)
    await showing('Disk 1 read-write', [disk0, 'rw'])
  }
})

t.test(
  'a reformat unformats the disks while it runs; a format under a stale handle reopens it; ' +
    'a stopped actor follows nothing',
  async (t) => {
    const { hal, auth, storage, journaled, request, showing } = await setup(t, 0x53, { host: '127.0.0.1', port: 0 })
    const sectors = hal.storage.disk0Sectors
    await hal.disks!.format(sectors, () => undefined)
    auth.publishState(identity(true, 0x53))
    await showing('formatted', ['rw', '-'])

    auth.publishState(identity(true, 0x53, { format: 'status25' }))
    await showing('unformatted while the reformat runs', ['-', '-'])
    t.equal((await request('unlock', 'storage:disk0')).status, 409)
    await hal.disks!.format(sectors, () => undefined)
    auth.publishState(identity(true, 0x53, { format: 'done' }))
    await showing('back as storage_mode says', ['rw', '-'])

    // A format the actor never saw running locks its handle in the HAL; the same unlock must open a new one.
    await hal.disks!.format(sectors, () => undefined)
    t.equal((await request('unlock_rw', 'storage:disk0:rw')).status, 200)
    const client = await NbdTestClient.connect(storage.nbdAddress!)
    t.teardown(() => client.close())
    t.notOk('error' in (await client.go('disk0')))
    t.equal((await client.read(0, 512)).errno, 0, 'the export reads through a live handle')

    await storage.stop()
    const before = journaled.length
    auth.publishState(identity(false, 0x53))
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.equal(journaled.length, before, 'a stopped actor no longer follows the identity')
  },
)

t.test('a mode change the journal does not take leaves the disk as it was, its export serving', async (t) => {
  const { hal, auth, storage, request, showing, transitions, setJournaling } = await setup(t, 0x53, {
    host: '127.0.0.1',
    port: 0,
  })
  await hal.disks!.format(hal.storage.disk0Sectors, () => undefined)
  auth.publishState(identity(true, 0x53))
  await showing('formatted', ['rw', '-'])
  const client = await NbdTestClient.connect(storage.nbdAddress!)
  t.teardown(() => client.close())
  t.notOk('error' in (await client.go('disk0')))
  const before = transitions().length

  setJournaling(false)
  t.equal((await request('unlock_ro', 'storage:disk0')).status, 503, 'the journal is out of reach')
  t.equal(await client.write(0, Buffer.alloc(512, 7)), 0, 'the writable handle still serves')
  t.equal(transitions().length, before, 'nothing journaled')
  setJournaling(true)
  t.equal((await request('unlock_ro', 'storage:disk0')).status, 200, 'once the journal is back, the change is made')
  await showing('read-only', ['ro', '-'])
  const reader = await NbdTestClient.connect(storage.nbdAddress!)
  t.teardown(() => reader.close())
  t.notOk('error' in (await reader.go('disk0')))
  t.same((await reader.read(0, 512)).data, Buffer.alloc(512, 7), 'what was written through the old handle')
  t.not(await reader.write(0, Buffer.alloc(512)), 0, 'the new handle is read-only')
})
