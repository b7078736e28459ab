import { randomBytes } from 'node:crypto'
import { readFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { Packr } from 'msgpackr'
import t, { type Test } from 'tap'
import {
  DuplicateKeyError,
  KeyRecordFormatError,
  RepositoryFullError,
  UnknownKeyError,
} from '../actors/keystore/errors.js'
import { KeyRepository } from '../actors/keystore/key-repository.js'
import { decodeKeyRecord, encodeKeyRecord } from '../actors/keystore/key-record-codec.js'
import { keyTypes, type KeyType } from '../protocol/key-types.js'
import type { KeyRecord } from '../protocol/keystore-state.js'
import { openHal, type KeySlotMedia, type Sealer as HalSealer } from '../hal/index.js'
import { FileKeySlotMedia, KEY_SLOT_FILE } from '../hal/sim/key-slot-media.js'
import { testSealer } from './helpers/test-sealer.js'
import { DelegatingKeySlotMedia } from './helpers/delegating-media.js'
import { randomBytesArray, randomKeyRecord } from './helpers/key-records.js'
import { builtFirmware } from './helpers/device.js'

const DEVID = '0123456789abcdef'
const SLOT = 4096

type Sealer = HalSealer

/** AES-256-GCM as the sim enclave does it (nonce || ciphertext || tag), with a key of the test's own. */
/** A media that fails the writes (or the erase) a test asks it to, and passes the rest on. */
class FlakyMedia extends DelegatingKeySlotMedia {
  failWrite: (index: number, data: Uint8Array) => boolean = () => false
  failErase = false
  override write(index: number, data: Uint8Array) {
    return this.failWrite(index, data) ? Promise.reject(new Error('EIO (injected)')) : this.inner.write(index, data)
  }
  override erase() {
    return this.failErase ? Promise.reject(new Error('EIO (injected)')) : this.inner.erase()
  }
}

const isTombstone = (data: Uint8Array) => data[0] === 0x48 && data[1] === 0x4b && data[2] === 2

const random = randomBytesArray

/** A valid record of `type`; `imported` leaves out the secret of an asymmetric key. */
const record = randomKeyRecord

async function setup(t: Test, slotCount = 8) {
  const dir = t.testdir()
  const media = new FileKeySlotMedia(dir, { slotCount, slotSize: SLOT })
  t.teardown(() => media.close())
  const sealer = testSealer()
  const open = (options: { media?: KeySlotMedia; devid?: string; sealer?: Sealer } = {}) =>
    KeyRepository.open({ media, sealer, devid: DEVID, ...options })
  const file = () => readFile(join(dir, KEY_SLOT_FILE))
  const slot = async (index: number) => (await media.readAll())[index]!
  return { media, sealer, open, file, slot }
}

/**
 * A live slot in the repository's format, sealed as it seals, holding any `plaintext`: slots it would never write
 * itself.
 */
async function craftedSlot(
  sealer: Sealer,
  index: number,
  generation: number,
  serialNo: number,
  plaintext: Uint8Array,
): Promise<Uint8Array> {
  const header = Buffer.alloc(12)
  header.write('HK', 0, 'latin1')
  header[2] = 1 // live
  header[3] = 1 // format version
  header.writeUInt32BE(generation, 4)
  header.writeUInt32BE(serialNo, 8)
  const index32 = Buffer.alloc(4)
  index32.writeUInt32BE(index)
  const sealed = await sealer.seal(
    plaintext,
    Buffer.concat([Buffer.from(`hemd key slot v1\0${DEVID}\0`), index32, header]),
  )
  const length = Buffer.alloc(2)
  length.writeUInt16BE(sealed.length)
  return Buffer.concat([header, length, sealed])
}

function catching(fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    return err
  }
  return undefined
}

function withoutMode(rec: KeyRecord): KeyRecord {
  const { mode: _, ...rest } = rec
  return rest
}

const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex')

t.test('every key type survives a reopen, in creation order, with or without secret or public key', async (t) => {
  const { open } = await setup(t, 32)
  const repo = await open()
  t.ok(repo.intact)
  t.same(repo.keys(), [])
  const importedX25519 = record('CURVE25519', { imported: true })
  const withoutAMode = withoutMode(record('SECP521R1', { imported: true }))
  const records = [
    ...Object.keys(keyTypes).map((type) => record(type as KeyType)),
    importedX25519,
    record('ED448', { imported: true }),
    withoutAMode,
    record('MLDSA87', { imported: true }),
    record('AES256', { descr: Uint8Array.of(1, 2, 3), label: ' ~printable~ ' }),
    record('SHA2-512', { descr: new Uint8Array(64).fill(0xff), created: 0, updated: 2 ** 40 }),
  ]
  for (const rec of records) await repo.add(rec)
  t.same(repo.keys(), records, 'what was added, in order')
  t.ok(repo.has(records[3]!.kid))
  t.same(repo.get(records[3]!.kid), records[3])
  t.equal(repo.get('0'.repeat(32)), undefined)
  t.notOk(repo.has('0'.repeat(32)))

  const reopened = await open()
  t.ok(reopened.intact)
  t.same(reopened.problems, [])
  t.same(reopened.keys(), records, 'the same records in the same order after a reboot')
  t.notOk(reopened.get(records[1]!.kid)?.publicKey, 'a symmetric key has no public key')
  t.notOk(reopened.get(importedX25519.kid)?.secret, 'an imported public key has no secret')
  t.notOk('mode' in reopened.get(withoutAMode.kid)!, 'an absent mode stays absent')
})

t.test('creation order holds when keys are removed, slots reused and keys replaced', async (t) => {
  const { open } = await setup(t, 4)
  const repo = await open()
  const [a, b, c, d, e] = ['AES128', 'AES192', 'AES256', 'ED25519', 'SHA2-256'].map((type) => record(type as KeyType))
  for (const rec of [a!, b!, c!, d!]) await repo.add(rec)
  t.ok(await repo.remove(a!.kid))
  await repo.add(e!) // into slot 0, a's
  await repo.remove(c!.kid)
  const b2 = { ...b!, label: 'renamed', updated: b!.updated + 1 }
  await repo.replace(b2) // into slot 2, c's; b's old slot 1 is now deleted
  t.same(
    repo.keys().map((k) => k.label),
    [b2.label, d!.label, e!.label],
  )
  t.same(
    (await open()).keys().map((k) => k.label),
    [b2.label, d!.label, e!.label],
    'after a reboot',
  )
  const f = record('AES128')
  await repo.add(f)
  t.same(repo.keys().at(-1), f, 'a new key comes last, even in the lowest slot')
  t.same((await open()).keys().at(-1), f)
})

t.test(
  'stats count live, deleted and free slots; free slots are used before deleted ones; then it is full',
  async (t) => {
    const { open } = await setup(t, 4)
    const repo = await open()
    t.same(repo.stats(), { total: 0, deleted: 0, invalid: 0, freeespace: 4, fragmentation: 0 })
    const keys = [record('AES128'), record('AES128'), record('AES128')]
    for (const key of keys) await repo.add(key)
    t.same(repo.stats(), { total: 3, deleted: 0, invalid: 0, freeespace: 1, fragmentation: 0 })
    await repo.remove(keys[0]!.kid)
    t.same(repo.stats(), { total: 3, deleted: 1, invalid: 0, freeespace: 1, fragmentation: 33 })
    t.same((await open()).stats(), repo.stats(), 'the same after a reboot')
    await repo.add(record('AES128'))
    t.same(
      repo.stats(),
      { total: 4, deleted: 1, invalid: 0, freeespace: 0, fragmentation: 25 },
      'the free slot went first',
    )
    await repo.add(record('AES128'))
    t.same(repo.stats(), { total: 4, deleted: 0, invalid: 0, freeespace: 0, fragmentation: 0 }, 'then the deleted one')
    const before = repo.keys()
    await t.rejects(repo.add(record('AES128')), RepositoryFullError)
    await t.rejects(repo.replace({ ...keys[1]!, label: 'new' }), RepositoryFullError, 'an update needs a spare slot')
    t.same(repo.keys(), before, 'nothing changed')
    t.same(repo.stats().total, 4)
  },
)

t.test('duplicates, unknown keys and malformed records are refused without a write', async (t) => {
  const { open, media } = await setup(t)
  const flaky = new FlakyMedia(media)
  const repo = await open({ media: flaky })
  const key = record('SECP256K1')
  await repo.add(key)
  let writes = 0
  flaky.failWrite = () => (writes++, false)
  await t.rejects(repo.add({ ...key, label: 'other' }), DuplicateKeyError)
  await t.rejects(repo.replace(record('AES128')), UnknownKeyError)
  t.equal(await repo.remove(record('AES128').kid), false)
  const bad: [string, unknown][] = [
    ['upper-case kid', { ...key, kid: key.kid.toUpperCase() }],
    ['short secret', { ...key, secret: key.secret!.subarray(1) }],
    ['uncompressed public key', { ...key, publicKey: Uint8Array.of(4, ...key.publicKey!.subarray(1)) }],
    ['mode on AES', { ...record('AES128'), mode: 'ECDH' }],
    ['bad mode', { ...key, mode: 'sign' }],
    ['public key on HMAC', { ...record('SHA2-256'), publicKey: new Uint8Array(32) }],
    ['AES without secret', { ...record('AES128'), secret: undefined }],
    ['ECDH without public key', { ...record('CURVE448'), publicKey: undefined }],
    ['long descr', { ...key, descr: new Uint8Array(65) }],
    ['label', { ...key, label: '' }],
    ['time', { ...key, created: -1 }],
    ['type', { ...key, type: 'RSA2048' }],
    ['extra field', { ...key, extra: 1 }],
    ['not an object', 'AES128'],
  ]
  for (const [what, rec] of bad) await t.rejects(repo.add(rec as KeyRecord), KeyRecordFormatError, what)
  t.equal(writes, 0, 'no write for any of them')
  t.equal(repo.keys().length, 1)
})

t.test('key material is never in the file in plaintext, and a deleted key leaves nothing behind', async (t) => {
  const { open, file, slot } = await setup(t)
  const repo = await open()
  const keys = [record('AES256'), record('SECP521R1'), record('ED448')]
  for (const key of keys) await repo.add(key)
  const stored = await file()
  for (const key of keys)
    t.notOk(stored.includes(Buffer.from(key.secret!)), `the ${key.type} secret is not in the slot file`)
  const sealedSlot = Buffer.from(await slot(1))
  await repo.remove(keys[1]!.kid)
  t.same(
    await slot(1),
    Uint8Array.from([0x48, 0x4b, 2, 1, ...new Uint8Array(SLOT - 4)]),
    'a tombstone: marker, then zeros',
  )
  const after = await file()
  t.notOk(after.includes(sealedSlot.subarray(14, 14 + 64)), 'the sealed bytes are overwritten, not just flagged')
  t.notOk(after.includes(Buffer.from(keys[1]!.publicKey!)), 'the public key is not there either')
  t.equal(await repo.remove(keys[1]!.kid), false, 'removing it again finds nothing')
  const reopened = await open()
  t.ok(reopened.intact)
  t.same(reopened.keys(), [keys[0], keys[2]])
})

t.test('a slot that does not check is invalid: counted, named, kept, never reused', async (t) => {
  const { open, media, slot } = await setup(t, 4)
  const repo = await open()
  const keys = [record('SECP256R1'), record('AES128')]
  for (const key of keys) await repo.add(key)
  const flipped = Uint8Array.from(await slot(0))
  flipped[40]! ^= 0x01
  await media.write(0, flipped)

  const reopened = await open()
  t.notOk(reopened.intact)
  t.equal(reopened.problems.length, 1)
  t.match(reopened.problems[0], /^slot 0: /)
  t.notOk(reopened.problems.join('\n').includes(hex(keys[0]!.secret)), 'no key bytes in the report')
  t.same(reopened.keys(), [keys[1]])
  t.same(reopened.stats(), { total: 2, deleted: 0, invalid: 1, freeespace: 2, fragmentation: 0 })
  await reopened.add(record('AES128'))
  await reopened.add(record('AES128'))
  await t.rejects(reopened.add(record('AES128')), RepositoryFullError, 'the invalid slot is not reused')
  t.same(await slot(0), flipped, 'the evidence stays as it was')
  t.notOk(reopened.intact, 'and so does the verdict')
})

t.test('what is wrong with a slot is told apart', async (t) => {
  const { open, media, slot, sealer } = await setup(t)
  const repo = await open()
  await repo.add(record('AES128'))
  const good = await slot(0)
  const edit = (at: number, value: number) => {
    const copy = Uint8Array.from(good)
    copy[at] = value
    return copy
  }
  const cases: [Uint8Array, RegExp][] = [
    [edit(0, 0x58), /bad magic/],
    [edit(3, 2), /format version 2/],
    [edit(2, 9), /unknown state 9/],
    [Uint8Array.from([0x48, 0x4b, 2, 1, 0, 0, 7]), /tombstone that still holds data/],
    [edit(7, 0), /generation or serial is zero/],
    [edit(12, 0xff), /runs past the end/],
    [edit(SLOT - 1, 1), /after the sealed record are not zero/],
    [edit(13, good[13]! + 1), /seal does not open/],
    [edit(5, 1), /seal does not open/],
    [edit(11, 9), /seal does not open/],
    [
      await craftedSlot(sealer, 0, 1, 1, new Packr({ useRecords: false }).pack({ kid: 'x' })),
      /record does not decode: `kid`/,
    ],
    [await craftedSlot(sealer, 0, 1, 1, Uint8Array.of(0x81)), /record does not decode: .* MessagePack/],
  ]
  for (const [bytes, problem] of cases) {
    await media.write(0, bytes)
    const reopened = await open()
    t.notOk(reopened.intact, problem.source)
    t.same(reopened.problems.length, 1)
    t.match(reopened.problems[0], new RegExp(`^slot 0: .*${problem.source}`), problem.source)
  }
})

t.test('a slot from another device, moved to another slot, or with an edited generation does not open', async (t) => {
  const { open, media, slot } = await setup(t)
  const repo = await open()
  const key = record('ED25519')
  await repo.add(key)
  const other = await open({ devid: 'fedcba9876543210' })
  t.notOk(other.intact, 'another devid')
  t.same(other.keys(), [])
  t.match(other.problems, [/^slot 0: the seal does not open/])

  const first = await slot(0)
  await repo.replace({ ...key, label: 'second' }) // generation 2 in slot 1; slot 0 tombstoned
  await media.write(5, first)
  const moved = await open()
  t.notOk(moved.intact, 'a copy of the old version in another slot')
  t.match(moved.problems, [/^slot 5: the seal does not open/])
  t.equal(moved.get(key.kid)?.label, 'second')

  const promoted = Uint8Array.from(first)
  promoted[7] = 3 // generation 1 -> 3, to win over the current version
  await media.write(5, new Uint8Array(0))
  await media.write(0, promoted)
  const rolled = await open()
  t.notOk(rolled.intact, 'an old version with a higher generation written in')
  t.match(rolled.problems, [/^slot 0: the seal does not open/])
  t.equal(rolled.get(key.kid)?.label, 'second')

  await media.write(0, first)
  const restored = await open()
  t.ok(restored.intact, 'the old version put back where it was reads as an interrupted update')
  t.equal(restored.get(key.kid)?.label, 'second', 'and loses to the newer one')
  t.ok(isTombstone(await slot(0)), 'which tombstones it')
})

t.test('an update interrupted before the old version is tombstoned resolves to the new version', async (t) => {
  const { open, media, slot } = await setup(t)
  const flaky = new FlakyMedia(media)
  const repo = await open({ media: flaky })
  const [key, other] = [record('SECP384R1'), record('AES192')]
  await repo.add(key)
  await repo.add(other)
  flaky.failWrite = (_, data) => isTombstone(data)
  const updated = { ...key, label: 'updated', updated: key.updated + 60 }
  await repo.replace(updated)
  t.same(repo.get(key.kid), updated, 'the new version is durable, so the update has happened')
  t.same(repo.stats(), { total: 3, deleted: 1, invalid: 0, freeespace: 5, fragmentation: 33 })
  t.notOk(isTombstone(await slot(0)), 'the old version is still on the media (the crash)')

  const recovered = await open({ media: flaky })
  t.ok(recovered.intact, 'not an integrity failure')
  t.same(recovered.keys(), [updated, other], 'the newer version, in its place in the order')
  t.same(recovered.stats(), repo.stats())
  t.notOk(isTombstone(await slot(0)), 'the tombstone could not be written at open either')
  await t.rejects(
    recovered.add(record('AES128')),
    /EIO/,
    'a change writes the pending tombstone first, and fails with it',
  )
  t.same(recovered.keys(), [updated, other], 'nothing of that change happened')
  await t.rejects(recovered.remove(other.kid), /EIO/, 'so does a deletion...')
  t.notOk(recovered.has(other.kid), '...which is decided all the same: the key is gone from memory')

  flaky.failWrite = () => false
  t.ok(await repo.remove(other.kid), 'with the media back the pending tombstone is written first')
  t.ok(isTombstone(await slot(0)))
  const again = await open()
  t.same(again.keys(), [updated])
  t.same(again.stats(), { total: 3, deleted: 2, invalid: 0, freeespace: 5, fragmentation: 66 })
})

t.test('two slots with the same version of a key break integrity', async (t) => {
  const { open, media, sealer } = await setup(t)
  const key = record('CURVE25519')
  await media.write(1, await craftedSlot(sealer, 1, 4, 1, encodeKeyRecord(key)))
  await media.write(6, await craftedSlot(sealer, 6, 4, 1, encodeKeyRecord({ ...key, label: 'twin' })))
  const repo = await open()
  t.notOk(repo.intact)
  t.same(repo.problems, [`slot 6: holds version 4 of key ${key.kid}, as slot 1 does`])
  t.same(repo.keys(), [key], 'the first one is served')
  t.same(repo.stats(), { total: 2, deleted: 0, invalid: 1, freeespace: 6, fragmentation: 0 })
  await repo.replace({ ...key, label: 'next' })
  t.equal((await open()).get(key.kid)?.label, 'next', 'updates continue from the version found')
})

t.test('a key whose version counter is exhausted is not updated', async (t) => {
  const { open, media, sealer } = await setup(t)
  const key = record('ED25519')
  await media.write(0, await craftedSlot(sealer, 0, 0xffffffff, 1, encodeKeyRecord(key)))
  const repo = await open()
  t.ok(repo.intact)
  await t.rejects(repo.replace({ ...key, label: 'one more' }), RangeError)
  t.same(repo.keys(), [key])
  t.same(repo.stats().total, 1)
})

t.test('wipe erases every key, tombstone and invalid slot', async (t) => {
  const { open, media, file } = await setup(t)
  const repo = await open()
  const keys = [record('AES256'), record('ED448'), record('SHA2-384')]
  for (const key of keys) await repo.add(key)
  await repo.remove(keys[1]!.kid)
  await media.write(7, Uint8Array.of(1, 2, 3))
  const damaged = await open()
  t.notOk(damaged.intact)
  const sealed = (await file()).subarray(14, 60)
  await damaged.wipe()
  t.ok(damaged.intact)
  t.same(damaged.problems, [])
  t.same(damaged.keys(), [])
  t.same(damaged.stats(), { total: 0, deleted: 0, invalid: 0, freeespace: 8, fragmentation: 0 })
  t.notOk((await file()).includes(sealed), 'the sealed bytes are gone')
  const key = record('AES128')
  await damaged.add(key)
  const reopened = await open()
  t.ok(reopened.intact)
  t.same(reopened.keys(), [key])
  t.same(reopened.stats().total, 1)
})

t.test('a failed media write or seal leaves the repository as it was', async (t) => {
  const { open, media, sealer } = await setup(t)
  const flaky = new FlakyMedia(media)
  const repo = await open({ media: flaky })
  const keys = [record('AES128'), record('ED25519')]
  for (const key of keys) await repo.add(key)
  // Copies: the repository wipes the secret of a record it drops.
  const snapshot = () => ({ keys: structuredClone(repo.keys()), stats: repo.stats(), intact: repo.intact })
  const before = snapshot()
  flaky.failWrite = () => true
  flaky.failErase = true
  await t.rejects(repo.add(record('AES256')), /EIO/)
  await t.rejects(repo.replace({ ...keys[0]!, label: 'new' }), /EIO/)
  await t.rejects(repo.wipe(), /EIO/)
  t.same(snapshot(), before, 'in memory')
  t.same((await open()).keys(), before.keys, 'on the media')
  // A deletion is the exception: journaled before, it has happened, whatever the media says.
  await t.rejects(repo.remove(keys[1]!.kid), /EIO/)
  t.same(repo.keys(), [keys[0]], 'a deleted key is gone from memory though its tombstone failed')
  t.same((await open()).keys(), before.keys, 'and on the media until the tombstone is retried')

  flaky.failWrite = () => false
  flaky.failErase = false
  const failingSealer = { ...sealer, seal: () => Promise.reject(new Error('enclave busy')) }
  const sealing = await open({ media: flaky, sealer: failingSealer })
  await t.rejects(sealing.add(record('AES256')), /enclave busy/)
  t.same(sealing.stats(), before.stats)

  const later = record('SHA2-256')
  await repo.add(later)
  t.same(repo.keys(), [keys[0], later], 'it carries on once the media works')
  t.same((await open()).keys(), [keys[0], later], 'the pending tombstone written first')
})

t.test('changes run one at a time, in call order', async (t) => {
  const { open } = await setup(t)
  const repo = await open()
  const keys = Array.from({ length: 5 }, () => record('AES128'))
  const twin = { ...keys[2]!, label: 'twin' }
  const results = await Promise.allSettled([
    ...keys.map((key) => repo.add(key)),
    repo.add(twin),
    repo.remove(keys[0]!.kid),
    repo.replace({ ...keys[4]!, label: 'last' }),
  ])
  t.same(
    results.map((r) => r.status),
    ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  )
  t.type((results[5] as PromiseRejectedResult).reason, DuplicateKeyError)
  t.same(
    repo.keys().map((k) => k.label),
    [keys[1]!.label, keys[2]!.label, keys[3]!.label, 'last'],
  )
  t.same((await open()).keys(), repo.keys())
  t.same(repo.stats(), { total: 6, deleted: 2, invalid: 0, freeespace: 2, fragmentation: 33 })
})

t.test('open checks what it is given', async (t) => {
  const { open, media, sealer } = await setup(t)
  await (await open()).add(record('AES128'))
  for (const devid of ['0123456789ABCDEF', '0123', 7]) {
    await t.rejects(open({ devid: devid as string }), TypeError, `devid ${devid}`)
  }
  const shaped = (slotCount: number, slotSize: number, slots = slotCount): KeySlotMedia => ({
    slotCount,
    slotSize,
    readAll: async () => Array.from({ length: slots }, () => new Uint8Array(slotSize)),
    read: async (_offset, length) => new Uint8Array(length),
    write: async () => undefined,
    erase: async () => undefined,
    close: async () => undefined,
  })
  await t.rejects(open({ media: shaped(0, 512) }), RangeError, 'no slots')
  await t.rejects(open({ media: shaped(4, 14) }), RangeError, 'slots too small for a header')
  await t.rejects(open({ media: shaped(4, 14 + 0x10000) }), RangeError, 'slots too large for the length field')
  await t.rejects(open({ media: shaped(4, 512, 3) }), RangeError, 'the media returns fewer slots than it has')
  const small = await open({ media: shaped(4, 64) })
  await t.rejects(
    small.add(record('AES128')),
    RangeError,
    'a record that does not fit the slot is refused before the write',
  )
  t.same(small.stats().total, 0)
  const broken = { ...sealer, unseal: () => Promise.reject(new Error('sealing key unreadable')) }
  await t.rejects(open({ sealer: broken }), /sealing key unreadable/, 'an enclave fault is not a bad slot')
  t.equal(media.slotCount, 8)
})

t.test('with the sim HAL: sealed by the enclave, bound to the device', async (t) => {
  const dir = t.testdir()
  const firmware = await builtFirmware()
  const hal = await openHal({ variant: 'E', dataDir: join(dir, 'a'), firmware })
  const open = (h: typeof hal) =>
    KeyRepository.open({ media: h.keySlots, sealer: h.enclave.sealer('keys'), devid: h.devid })
  const key = record('SECP256R1')
  await (await open(hal)).add(key)
  await hal.close()

  const rebooted = await openHal({ variant: 'E', dataDir: join(dir, 'a'), firmware })
  const repo = await open(rebooted)
  t.ok(repo.intact)
  t.same(repo.keys(), [key], 'after a reboot')
  t.notOk((await readFile(join(dir, 'a', 'keys', 'slots-4096.bin'))).includes(Buffer.from(key.secret!)))
  const stolen = await rebooted.keySlots.readAll()
  await rebooted.close()

  const other = await openHal({ variant: 'E', dataDir: join(dir, 'b'), firmware })
  t.teardown(() => other.close())
  await other.keySlots.write(0, stolen[0]!)
  const foreign = await open(other)
  t.notOk(foreign.intact, 'a slot from another device')
  t.same(foreign.keys(), [])
  t.same(foreign.stats().invalid, 1)
})

t.test('the record codec reads back exactly what it wrote and nothing else', async (t) => {
  const packr = new Packr({ useRecords: false })
  const key = record('SECP256K1', { descr: Uint8Array.of(9) })
  const bytes = encodeKeyRecord(key)
  const decoded = decodeKeyRecord(bytes)
  t.same(decoded, key)
  t.equal(Object.getPrototypeOf(decoded.secret), Uint8Array.prototype, 'plain byte arrays, not views of a buffer')
  const secret = key.secret!
  const fields = { ...key } as Record<string, unknown>
  const bad: [string, Uint8Array][] = [
    ['trailing bytes', Buffer.concat([bytes, Uint8Array.of(0)])],
    ['empty', new Uint8Array(0)],
    ['an array', packr.pack([key.kid])],
    ['a string key map with an unknown field', packr.pack({ ...fields, kid2: key.kid })],
    ['a number where bytes go', packr.pack({ ...fields, secret: 5 })],
    ['a string where bytes go', packr.pack({ ...fields, secret: hex(secret) })],
    ['created as a string', packr.pack({ ...fields, created: '1700000000' })],
    ['a fractional time', packr.pack({ ...fields, updated: 1.5 })],
    ['no label', packr.pack({ ...fields, label: undefined })],
    [
      'a prototype key',
      Buffer.concat([Uint8Array.of(0x81, 0xa9), Buffer.from('__proto__'), packr.pack({ kid: key.kid })]),
    ],
  ]
  for (const [what, input] of bad) {
    const err = catching(() => decodeKeyRecord(input))
    t.type(err, KeyRecordFormatError, what)
    t.notOk(
      String(err).includes(hex(secret)) || String(err).includes(secret.join(',')),
      `${what}: no key bytes in the error`,
    )
  }
})

t.test('the codec knows the material sizes of every type, the post-quantum secret being the seed', async (t) => {
  for (const type of Object.keys(keyTypes) as KeyType[]) {
    const key = record(type)
    t.same(decodeKeyRecord(encodeKeyRecord(key)), key, `${type} reads back`)
    const longer = { ...key, secret: Uint8Array.from([...key.secret!, 0]) }
    t.type(
      catching(() => encodeKeyRecord(longer)),
      KeyRecordFormatError,
      `${type}: a secret one byte too long`,
    )
    if (key.publicKey) {
      const shorter = { ...key, publicKey: key.publicKey.subarray(1) }
      t.type(
        catching(() => encodeKeyRecord(shorter)),
        KeyRecordFormatError,
        `${type}: a public key one byte short`,
      )
    }
  }
  t.type(
    catching(() => encodeKeyRecord({ ...record('MLKEM768'), secret: random(2400) })),
    KeyRecordFormatError,
    'an expanded ML-KEM secret key is not what is stored',
  )
  t.type(
    catching(() => encodeKeyRecord({ ...record('ED25519'), mode: 'ExDSA' })),
    KeyRecordFormatError,
    'a mode on a key that has none',
  )
  const packr = new Packr({ useRecords: false })
  t.type(
    catching(() => decodeKeyRecord(packr.pack({ ...record('SECP256R1'), mode: 'ExDSA,ECDH' }))),
    KeyRecordFormatError,
    'a mode spelled otherwise than the keystore spells it',
  )
})

t.test('the largest record (ML-DSA-87, longest label and descr) fits a 4096-byte slot under 4095 bytes', async (t) => {
  const { open, slot } = await setup(t, 2)
  const repo = await open()
  const key = record('MLDSA87', { label: '~'.repeat(32), descr: new Uint8Array(64).fill(0xff) })
  await repo.add(key)
  const bytes = await slot(0)
  const used = bytes.findLastIndex((byte) => byte !== 0) + 1
  t.ok(used <= 4095, `${used} bytes of the slot used`)
  t.ok(used > 2592, 'the public key is in it')
  t.same((await open()).keys(), [key])
})

t.test('a repository on the 512-byte slots of before opens the same after the move to 4096-byte slots', async (t) => {
  const dir = t.testdir()
  const sealer = testSealer()
  const legacy = new FileKeySlotMedia(dir, { slotCount: 1024, slotSize: 512 })
  const before = await KeyRepository.open({ media: legacy, sealer, devid: DEVID })
  const keys = [record('AES256'), record('SECP256R1'), record('ED448', { descr: Uint8Array.of(7) })]
  for (const key of keys) await before.add(key)
  await before.remove(keys[0]!.kid)
  await before.replace({ ...keys[1]!, label: 'renamed', updated: 1_700_000_001 })
  const stats = before.stats()
  await legacy.close()
  // What hemd left before slots grew: the same slots, 512 bytes each, in slots.bin.
  await rename(join(dir, KEY_SLOT_FILE), join(dir, 'slots.bin'))

  const media = new FileKeySlotMedia(dir)
  t.teardown(() => media.close())
  const after = await KeyRepository.open({ media, sealer, devid: DEVID })
  t.ok(after.intact, 'every slot opens at its index')
  t.same(after.keys(), [{ ...keys[1]!, label: 'renamed', updated: 1_700_000_001 }, keys[2]], 'the same keys, in order')
  t.same(after.stats(), stats, 'the same slots: live, deleted and free')
  await after.add(record('MLDSA87'))
  t.same((await KeyRepository.open({ media, sealer, devid: DEVID })).keys().length, 3, 'and an ML-DSA-87 key fits')
})
