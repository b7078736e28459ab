// Torn writes in the key repository: a write that a full disk tears never loses a stored key and
// is mended by the next change; a torn slot that a boot finds is reported as damage (fls 0x08,
// KEY_INTEGRITY_ERROR) and keys and ciphers are refused.
import { appendOnly } from './helpers/keystore-context.js'
import { KeyLifecycles } from '../actors/keystore/key-lifecycles.js'
import { randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ExpandedKeys } from '../actors/keystore/crypto-expanded-keys.js'
import { createKey as createKeyOp, deleteKey, updateKey } from '../actors/keystore/key-management.js'
import { KeyRepository } from '../actors/keystore/key-repository.js'
import type { KeystoreActor } from '../actors/keystore/keystore-actor.js'
import type { KeyRecord } from '../protocol/keystore-state.js'
import { LogResult, LogType, type JournalEntry } from '../protocol/journal.js'
import { nativeEngine } from '../hal/crypto/index.js'
import { isStorageFull } from '../hal/errors.js'
import type { Sealer } from '../hal/index.js'
import { noSpaceError, setSimDiskFull } from '../hal/sim/disk-space.js'
import { FileKeySlotMedia } from '../hal/sim/key-slot-media.js'
import { testSealer } from './helpers/test-sealer.js'
import { DelegatingKeySlotMedia } from './helpers/delegating-media.js'
import { bootDevice } from './helpers/device.js'
import { readJournal } from './helpers/journal.js'
import { Tokens, api, b64, createKey } from './helpers/keys.js'
import { silentLogger } from './helpers/logger.js'
import { owned } from './helpers/owner.js'

const DEVID = '0123456789abcdef'
const ENOSPC = { code: 'ENOSPC' }
/** Where a live slot's sealed length is, and where its sealed bytes start. */
const LENGTH_AT = 12
const HEADER = 14

/** AES-256-GCM as the sim enclave seals, under a key of the test's own. */
function aesKey(label: string): KeyRecord {
  return {
    kid: randomBytes(16).toString('hex'),
    type: 'AES256',
    label,
    created: 1_700_000_000,
    updated: 1_700_000_000,
    secret: Uint8Array.from(randomBytes(32)),
  }
}

/** A repository on the sim disk of a data dir of its own; `reopen` reads the media afresh, as a boot would. */
async function setup(t: Test) {
  const dataDir = t.testdir()
  const media = new FileKeySlotMedia(join(dataDir, 'keys'), { slotCount: 8 })
  t.teardown(() => media.close())
  t.teardown(() => setSimDiskFull(dataDir, false))
  const sealer = testSealer()
  const repository = await KeyRepository.open({ media, sealer, devid: DEVID })
  const reopen = () => KeyRepository.open({ media, sealer, devid: DEVID })
  const full = (on: boolean) => setSimDiskFull(dataDir, on)
  const labels = (repo: KeyRepository) => repo.keys().map((key) => key.label)
  return { media, repository, reopen, full, labels }
}

t.test('a new key torn by a full disk: no key is lost, and the next change mends the slot first', async (t) => {
  const { media, repository, reopen, full, labels } = await setup(t)
  await repository.add(aesKey('A'))
  const stats = repository.stats()
  await full(true)
  await t.rejects(repository.add(aesKey('B')), ENOSPC)
  t.same(labels(repository), ['A'])
  t.same(repository.stats(), stats, 'the slot still counts as free')
  const torn = (await media.readAll())[1]!
  t.ok(
    torn.some((b) => b !== 0),
    'half a record landed in the free slot',
  )
  const booted = await reopen()
  t.same(labels(booted), ['A'], 'a boot before the mend keeps every stored key...')
  t.match(booted.problems, [/^slot 1: /], '...and reports the torn slot')
  await t.rejects(repository.add(aesKey('B')), ENOSPC, 'no change while the slot cannot be mended')
  await full(false)
  await repository.add(aesKey('B'))
  const after = await reopen()
  t.ok(after.intact, 'mended, then used')
  t.same(labels(after), ['A', 'B'])
})

t.test('an update torn by a full disk keeps the version before it', async (t) => {
  const { repository, reopen, full, labels } = await setup(t)
  const key = aesKey('old')
  await repository.add(key)
  await full(true)
  await t.rejects(repository.replace({ ...key, label: 'new' }), ENOSPC)
  t.same(labels(repository), ['old'])
  t.same(labels(await reopen()), ['old'], 'a boot finds the old version too')
  await full(false)
  await repository.mend()
  const mended = await reopen()
  t.ok(mended.intact, 'mend() puts the torn slot back')
  t.same(mended.stats(), repository.stats())
  await repository.replace({ ...key, label: 'new' })
  t.same(labels(await reopen()), ['new'])
})

t.test(
  'a delete whose tombstone fails: the key is gone, the tombstone is written before the next change',
  async (t) => {
    const { media, repository, reopen, full, labels } = await setup(t)
    const doomed = aesKey('doomed')
    await repository.add(doomed)
    await repository.add(aesKey('kept'))
    await full(true)
    await t.rejects(repository.remove(doomed.kid), ENOSPC)
    t.same(labels(repository), ['kept'], 'gone from memory: its deletion was decided')
    t.equal(repository.stats().deleted, 1)
    t.notOk(
      (await media.readAll())[0]!.every((b) => b === 0 || b === 0x48 || b === 0x4b),
      'its sealed bytes are still on the media',
    )
    await full(false)
    await repository.add(aesKey('next'))
    const after = await reopen()
    t.ok(after.intact)
    t.same(labels(after), ['kept', 'next'], 'the tombstone went first; the new key took a free slot')
    t.equal(after.stats().deleted, 1)
  },
)

/** Slots whose writes fail (as ENOSPC) while `failing`, counted; the rest goes to the sim media. */
class FailingSlots extends DelegatingKeySlotMedia {
  failing = false
  writes = 0
  override async write(index: number, data: Uint8Array) {
    this.writes++
    if (this.failing) throw noSpaceError('write', 'slots-4096.bin')
    await this.inner.write(index, data)
  }
}

/** The key-management handlers against a repository and a journal of the test's own, as the keystore runs them. */
async function keystore(t: Test, slotCount = 8) {
  const media = new FailingSlots(new FileKeySlotMedia(join(t.testdir(), 'keys'), { slotCount }))
  t.teardown(() => media.close())
  const sealer = testSealer()
  const repository = await KeyRepository.open({ media, sealer, devid: DEVID })
  const reopen = () => KeyRepository.open({ media, sealer, devid: DEVID })
  const journal = { records: [] as JournalEntry[], failing: false }
  const append = async (entries: JournalEntry[]) => {
    if (journal.failing) throw noSpaceError('write', 'journal')
    journal.records.push(...entries)
  }
  const actor = {
    logger: silentLogger,
    repository,
    engine: nativeEngine,
    keys: new KeyLifecycles(appendOnly(append), repository),
    expanded: new ExpandedKeys(),
    random: (n: number) => Uint8Array.from(randomBytes(n)),
    now: () => 1_700_000_000,
    unavailable: () => undefined,
    publish: () => undefined,
    journal: append,
  } as unknown as KeystoreActor
  const request = (body: Record<string, unknown>) => ({
    rid: 'r',
    tls: true,
    principal: { sub: 'U', scope: 'keymgmt' },
    body,
  })
  return { actor, media, repository, reopen, journal, request }
}

t.test('key management journals a change before it writes: a full journal leaves the slots untouched', async (t) => {
  const { actor, media, repository, journal, request } = await keystore(t)
  const kid = (await createKeyOp(actor, request({ label: 'first', type: 'AES256' }))).body as { kid: string }
  const writes = media.writes
  journal.failing = true
  await t.rejects(createKeyOp(actor, request({ label: 'second', type: 'AES256' })), ENOSPC)
  await t.rejects(updateKey(actor, request({ kid: kid.kid, label: 'renamed' })), ENOSPC)
  t.equal(media.writes, writes, 'no slot was written')
  t.same(
    repository.keys().map((key) => key.label),
    ['first'],
  )
})

t.test('a slot write that fails after its record is journaled as failed; the key store is as before', async (t) => {
  const { actor, media, repository, journal, request } = await keystore(t)
  const { kid } = (await createKeyOp(actor, request({ label: 'first', type: 'AES256' }))).body as { kid: string }
  journal.records.length = 0
  media.failing = true
  const created = await createKeyOp(actor, request({ label: 'second', type: 'AES256' })).catch((err: unknown) => err)
  t.ok(isStorageFull(created))
  await t.rejects(updateKey(actor, request({ kid, label: 'renamed' })), ENOSPC)
  t.same(
    repository.keys().map((key) => key.label),
    ['first'],
  )
  t.same(
    journal.records.map((r) =>
      r.type === LogType.TRANSITION ? [r.data?.event, r.data?.to] : [r.type, r.result, r.data?.source],
    ),
    [
      ['ADD', 'in_service'],
      [LogType.KEY_GENERATION, LogResult.OK, 200],
      ['ADD_FAILED', 'deleted'],
      [LogType.KEY_GENERATION, LogResult.ERROR, 507],
      [LogType.KEY_ATTRIBUTES_CHANGED, LogResult.OK, 200],
      [LogType.KEY_ATTRIBUTES_CHANGED, LogResult.ERROR, 507],
    ],
  )
  const [added, , failed, undone] = journal.records
  t.equal(undone!.data?.kid, journal.records[1]!.data?.kid, 'the failure names the key the record named')
  t.same([added!.data?.instance, failed!.data?.instance], [undone!.data?.kid, undone!.data?.kid], "the key's machine")
})

t.test('a deletion journaled while an earlier failed write is pending: the key is gone all the same', async (t) => {
  const { actor, media, repository, reopen, journal, request } = await keystore(t)
  const create = async (label: string) =>
    ((await createKeyOp(actor, request({ label, type: 'AES256' }))).body as { kid: string }).kid
  const doomed = await create('doomed')
  await create('kept')
  media.failing = true
  await t.rejects(createKeyOp(actor, request({ label: 'torn', type: 'AES256' })), ENOSPC, 'a write left pending')
  journal.records.length = 0
  await t.rejects(deleteKey(actor, request({ kid: doomed })), ENOSPC, 'the failure is answered')
  t.same(
    journal.records.map((r) => [r.type, r.result, r.data?.kid ?? r.data?.instance, r.data?.event]),
    [
      [LogType.TRANSITION, LogResult.OK, doomed, 'RETIRE'],
      [LogType.TRANSITION, LogResult.OK, doomed, 'DELETE'],
      [LogType.KEY_DELETE, LogResult.OK, doomed, undefined],
    ],
    'the deletion is journaled, and not undone',
  )
  t.notOk(repository.get(doomed), 'the key is unusable at once')
  t.same(
    repository.keys().map((key) => key.label),
    ['kept'],
  )
  t.match(await deleteKey(actor, request({ kid: doomed })), { status: 404 }, 'deleted once')
  media.failing = false
  await create('next')
  const after = await reopen()
  t.ok(after.intact, 'the pending writes went first: the tombstone and the torn slot')
  t.same(
    after.keys().map((key) => key.label),
    ['kept', 'next'],
  )
})

t.test('a repository without a slot left refuses a new key or version before anything is journaled', async (t) => {
  const { actor, journal, request } = await keystore(t, 1)
  const { kid } = (await createKeyOp(actor, request({ label: 'only', type: 'AES256' }))).body as { kid: string }
  journal.records.length = 0
  t.match(await createKeyOp(actor, request({ label: 'second', type: 'AES256' })), {
    status: 406,
    body: { error: 'repository_full' },
  })
  t.match(await updateKey(actor, request({ kid, label: 'renamed' })), {
    status: 406,
    body: { error: 'repository_full' },
  })
  t.same(journal.records, [])
})

/** The meaningful bytes of a live slot: header and sealed record, without the zero padding. */
function recordOf(slot: Buffer): Buffer {
  return slot.subarray(0, HEADER + slot.readUInt16BE(LENGTH_AT))
}

async function tornAtBoot(t: Test, tear: (slots: Buffer[], donor: Buffer) => void): Promise<void> {
  const o = await owned(t)
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  const victim = await createKey(o.https, gen, { label: 'victim', type: 'AES256' })
  const donor = await createKey(o.https, gen, { label: 'donor', type: 'AES256' })
  await o.device.stop()

  const path = join(o.device.dataDir, 'keys', 'slots-4096.bin')
  const bytes = await readFile(path)
  const slots = Array.from({ length: bytes.length / 4096 }, (_, i) => bytes.subarray(i * 4096, (i + 1) * 4096))
  t.equal(slots.length, 2, 'the victim in slot 0, the donor in slot 1')
  const padded = Buffer.alloc(1024 * 4096)
  slots.forEach((slot, i) => slot.copy(padded, i * 4096))
  const all = Array.from({ length: 1024 }, (_, i) => padded.subarray(i * 4096, (i + 1) * 4096))
  tear(all, recordOf(all[1]!))
  await writeFile(path, padded)

  const device = await bootDevice(t, { dataDir: o.device.dataDir, variant: 'E' })
  const base = device.httpUrl!
  const status = (await api(`${base}/api/system/status`, undefined)).json
  t.equal(status.fls_state & 0x08, 0x08, 'fls_state shows a data integrity failure')
  const alarms = (await readJournal(device.dataDir)).records.filter((r) => r.type === LogType.KEY_INTEGRITY_ERROR)
  t.equal(alarms.length, 1, 'one KEY_INTEGRITY_ERROR (type 24)')
  t.equal(alarms[0]!.result, LogResult.ERROR)
  t.equal(alarms[0]!.decoded?.invalid, 1, 'one invalid slot')
  const after = new Tokens(base)
  const refused = [
    await api(`${device.httpsUrl}/api/keymgmt/list`, await after.get('keymgmt:list')),
    await api(`${device.httpsUrl}/api/keymgmt/create`, await after.get('keymgmt:gen'), { label: 'x', type: 'AES256' }),
    await api(`${device.httpsUrl}/api/keymgmt/get/${victim}`, await after.get('keymgmt:get')),
    await api(`${device.httpsUrl}/api/crypto/cipher/encrypt`, await after.get(`keymgmt:use:${donor}`), {
      alg: 'AES256-GCM',
      kid: donor,
      msg: b64(Buffer.from('x')),
    }),
  ]
  t.same(
    refused.map((answer) => [answer.status, answer.json.error]),
    Array(4).fill([409, 'device_fault']),
    'key and crypto routes answer 409',
  )
}

t.test('a torn write over a stored key is found at boot', async (t) => {
  await t.test('the first half of a new record, the rest the old bytes', (t) =>
    tornAtBoot(t, (slots, donor) => void donor.subarray(0, donor.length / 2).copy(slots[0]!)),
  )
  await t.test('the first half of a new record, the rest zeros', (t) =>
    tornAtBoot(t, (slots, donor) => {
      slots[0]!.fill(0)
      donor.subarray(0, donor.length / 2).copy(slots[0]!)
    }),
  )
  await t.test('the first half of a new record in a free slot (a key create cut short)', (t) =>
    tornAtBoot(t, (slots, donor) => void donor.subarray(0, donor.length / 2).copy(slots[5]!)),
  )
})
