// The key repository as one flash image (crypto-contract §6): where each record sits, what a dump
// of the media shows (sealed records only), what a delete and a damaged record do to it, and the
// self-test's check of every record against the media as it is now.
import { randomBytes } from 'node:crypto'
import t, { type Test } from 'tap'
import { KeyRepository } from '../actors/keystore/key-repository.js'
import { keyTypes, type KeyType } from '../protocol/key-types.js'
import type { KeyRecord } from '../protocol/keystore-state.js'
import { FileKeySlotMedia } from '../hal/sim/key-slot-media.js'
import { DelegatingKeySlotMedia } from './helpers/delegating-media.js'
import { testSealer } from './helpers/test-sealer.js'
import { randomBytesArray, randomKeyRecord } from './helpers/key-records.js'

const DEVID = '0123456789abcdef'
const MAX_DUMP = 4095

const random = randomBytesArray

/** A valid record of `type` with random material, a label and a description of the test's own. */
function record(type: KeyType): KeyRecord {
  return randomKeyRecord(type, { label: `label-${randomBytes(8).toString('hex')}`, descr: random(64) })
}

async function setup(t: Test, slotCount = 8) {
  const media = new FileKeySlotMedia(t.testdir(), { slotCount })
  t.teardown(() => media.close())
  const sealer = testSealer()
  const open = () => KeyRepository.open({ media, sealer, devid: DEVID })
  return { media, open }
}

/** The whole image, read in dumps of at most 4095 bytes as the certification scripts read it. */
async function dumpAll(repo: KeyRepository): Promise<Buffer> {
  const pieces: Uint8Array[] = []
  for (let at = 0; at < repo.imageSize; at += MAX_DUMP)
    pieces.push(await repo.readImage(at, Math.min(MAX_DUMP, repo.imageSize - at)))
  return Buffer.concat(pieces)
}

t.test('every record sits at its slot: 32-byte aligned, distinct, at most 4095 bytes', async (t) => {
  const { media, open } = await setup(t)
  const repo = await open()
  const keys = [record('AES256'), record('SECP256R1'), record('MLKEM768')]
  for (const key of keys) await repo.add(key)
  const locations = keys.map((key) => repo.location(key.kid)!)
  t.same(
    locations.map((l) => l._addr),
    [0, 4096, 8192],
    'one slot each, in order',
  )
  t.ok(
    locations.every((l) => l._addr % 32 === 0 && l._len >= 14 && l._len <= MAX_DUMP),
    'aligned, header and seal',
  )
  t.equal(repo.location('0'.repeat(32)), undefined, 'no location for a key not stored')
  const slot = await media.read(locations[2]!._addr, media.slotSize)
  t.equal(slot.findLastIndex((b) => b !== 0) < locations[2]!._len, true, 'nothing of the record past its length')
  t.same(slot.subarray(0, 3), Uint8Array.from([0x48, 0x4b, 0x01]), 'a live record starts there')
  t.notSame(slot.subarray(4, 8), new Uint8Array(4), 'bytes 4 to 7 (the generation) are never all zero')

  await repo.remove(keys[0]!.kid)
  await repo.replace({ ...keys[1]!, label: 'renamed', updated: 1_700_000_001 })
  t.same(repo.location(keys[1]!.kid)?._addr, 3 * 4096, 'a new version moves to a spare slot')
  const reopened = await open()
  t.same(
    keys.slice(1).map((key) => reopened.location(key.kid)),
    keys.slice(1).map((key) => repo.location(key.kid)),
    'a reopen finds every record where it was',
  )
})

t.test('the largest record (ML-DSA-87, 64-byte descr, 32-character label) is at most 4095 bytes', async (t) => {
  const { open } = await setup(t, 2)
  const repo = await open()
  const key = { ...record('MLDSA87'), label: '~'.repeat(32), descr: new Uint8Array(64).fill(0xff) }
  await repo.add(key)
  const { _len } = repo.location(key.kid)!
  t.ok(_len <= MAX_DUMP, `${_len} bytes`)
  t.ok(_len > 2592 + 64 + 32, 'the public key, descr and label are all in it')
  t.ok((await open()).get(key.kid), 'and it opens again')
})

t.test('a dump of the whole image after a key of every type shows none of them in clear', async (t) => {
  const types = Object.keys(keyTypes) as KeyType[]
  const { open } = await setup(t, types.length + 1)
  const repo = await open()
  const keys = types.map(record)
  for (const key of keys) await repo.add(key)
  const image = await dumpAll(repo)
  t.equal(image.length, repo.imageSize)
  t.ok(
    keys.every((key) => image.includes(Buffer.from([0x48, 0x4b, 0x01]), repo.location(key.kid)!._addr)),
    'the records are in the dump',
  )
  for (const key of keys) {
    const shown = [
      ['secret', key.secret],
      ['public key', key.publicKey],
      ['descr', key.descr],
      ['label', Buffer.from(key.label)],
    ] as const
    for (const [name, bytes] of shown) {
      if (bytes) t.notOk(image.includes(Buffer.from(bytes)), `${key.type}: its ${name} is not in clear`)
    }
  }
})

t.test('a dump reads the media as it is now, and a delete changes it at the record', async (t) => {
  const { media, open } = await setup(t)
  const repo = await open()
  const key = record('ED25519')
  await repo.add(key)
  const { _addr, _len } = repo.location(key.kid)!
  const before = await repo.readImage(_addr, _len)
  t.same(before, await media.read(_addr, _len), 'the bytes of the media')
  t.same(await repo.readImage(_addr + 4096, 100), new Uint8Array(100), 'a slot never written is zeros')
  await media.write(0, Uint8Array.of(0x48, 0x4b, 0x01, 0x01, 9))
  t.equal((await repo.readImage(4, 1))[0], 9, 'not what memory holds: what the media holds')
  await media.write(0, before)

  await repo.remove(key.kid)
  const after = await repo.readImage(_addr, _len)
  t.notSame(after, before, 'the dump differs after the delete')
  t.same(after, Uint8Array.from([0x48, 0x4b, 0x02, 0x01, ...new Uint8Array(_len - 4)]), 'a tombstone, the rest zero')
  await t.rejects(repo.readImage(repo.imageSize - 1, 2), RangeError, 'past the end of the image')
  await t.rejects(repo.readImage(-1, 1), RangeError, 'before its start')
})

t.test('a damaged record is found by the next check and by the next open; memory alone is not touched', async (t) => {
  const { media, open } = await setup(t)
  const repo = await open()
  const [damaged, kept] = [record('AES256'), record('SECP384R1')]
  await repo.add(damaged)
  await repo.add(kept)
  t.same(await repo.verifyRecords(), [], 'an intact image: nothing newly fails')
  t.ok(repo.intact)

  const { _addr } = repo.location(damaged.kid)!
  const image = await media.read(0, 2 * media.slotSize)
  await repo.damageImage(_addr)
  const now = await media.read(0, 2 * media.slotSize)
  t.same(now.subarray(_addr + 4, _addr + 8), new Uint8Array(4), 'bytes 4 to 7 are zero')
  now.set(image.subarray(_addr + 4, _addr + 8), _addr + 4)
  t.same(now, image, 'and no other byte changed')
  t.ok(repo.get(damaged.kid), 'memory still holds the key until a check reads the media')
  const secret = repo.get(damaged.kid)!.secret!

  const failed = await repo.verifyRecords()
  t.same(failed, ['slot 0: generation or serial is zero'], 'the check finds it')
  t.notOk(repo.intact)
  t.same(repo.problems, failed)
  t.notOk(repo.has(damaged.kid), 'its key leaves memory')
  t.same(secret, new Uint8Array(secret.length), 'and its secret is wiped')
  t.ok(repo.has(kept.kid), 'the other key stays')
  t.same(repo.selfTestStats(), { total: 2, deleted: 0, invalid: 1, fragmented: 0, freeslots: 6 })
  t.same(await repo.verifyRecords(), [], 'found once: the next check finds nothing new')

  const reopened = await open()
  t.same(reopened.problems, failed, 'a reopen finds the same damage')
  t.same(reopened.selfTestStats(), repo.selfTestStats())
  await reopened.add(record('AES128'))
  t.equal(reopened.location(reopened.keys().at(-1)!.kid)?._addr, 2 * 4096, 'the bad slot is never reused')
})

t.test('the check finds any change of the media since the boot, and leaves slots being mended alone', async (t) => {
  const { media, open } = await setup(t)
  const repo = await open()
  const [a, b, c] = [record('AES256'), record('SHA2-256'), record('ED448')]
  for (const key of [a, b, c]) await repo.add(key)
  await repo.remove(c.kid)
  // Slot 1 overwritten with slot 0's record: it seals slot 0's index, so it does not open at 1.
  await media.write(1, await media.read(0, media.slotSize))
  // A free slot that is no longer zeros, a tombstone that holds data.
  await media.write(5, Uint8Array.of(1))
  await media.write(2, Uint8Array.of(0x48, 0x4b, 0x02, 0x01, 1))
  const failed = await repo.verifyRecords()
  t.same(failed, [
    'slot 1: the seal does not open (altered, moved, or from another device)',
    'slot 2: a tombstone that still holds data',
    'slot 5: not a key slot (bad magic)',
  ])
  t.same(
    repo.keys().map((key) => key.kid),
    [a.kid],
  )

  // A write that fails leaves its slot pending: what the media holds there is not yet what memory says.
  const flaky = new (class extends DelegatingKeySlotMedia {
    fail = false
    override write(index: number, data: Uint8Array) {
      return this.fail ? Promise.reject(new Error('EIO (injected)')) : this.inner.write(index, data)
    }
  })(media)
  const mending = await KeyRepository.open({ media: flaky, sealer: testSealer(), devid: DEVID })
  await mending.wipe()
  const d = record('AES128')
  await mending.add(d)
  flaky.fail = true
  await t.rejects(mending.remove(d.kid))
  t.same(await mending.verifyRecords(), [], 'a slot waiting for its tombstone is not damage')
  flaky.fail = false
  await mending.mend()
  t.same(await mending.verifyRecords(), [])
  t.ok(mending.intact)
})

t.test("the self-test's repo_stats count slots: in use, deleted, invalid, holes and never written", async (t) => {
  const { media, open } = await setup(t)
  const repo = await open()
  t.same(repo.selfTestStats(), { total: 0, deleted: 0, invalid: 0, fragmented: 0, freeslots: 8 })
  const keys = Array.from({ length: 5 }, () => record('AES128'))
  for (const key of keys) await repo.add(key)
  await repo.remove(keys[1]!.kid)
  await repo.remove(keys[2]!.kid)
  await repo.remove(keys[4]!.kid)
  t.same(
    repo.selfTestStats(),
    { total: 5, deleted: 3, invalid: 0, fragmented: 2, freeslots: 3 },
    'the deleted slot at the top is no hole below a slot in use',
  )
  await repo.damageImage(3 * media.slotSize)
  await repo.verifyRecords()
  t.same(repo.selfTestStats(), { total: 5, deleted: 3, invalid: 1, fragmented: 2, freeslots: 3 })
  t.same(repo.stats(), { total: 5, deleted: 3, invalid: 1, freeespace: 3, fragmentation: 60 }, 'status keeps its own')
})

t.test('damage is done only inside the image, and never interleaves with a change', async (t) => {
  const { media, open } = await setup(t, 2)
  const repo = await open()
  await t.rejects(repo.damageImage(repo.imageSize), RangeError)
  await t.rejects(repo.damageImage(-32), RangeError)
  // The last 32 bytes: bytes 4 to 7 of them lie in the last slot.
  await media.write(1, new Uint8Array(media.slotSize).fill(0xaa))
  await repo.damageImage(repo.imageSize - 32)
  const tail = await media.read(repo.imageSize - 32, 32)
  t.same([...tail.subarray(0, 12)], [0xaa, 0xaa, 0xaa, 0xaa, 0, 0, 0, 0, 0xaa, 0xaa, 0xaa, 0xaa])

  await media.write(1, new Uint8Array(0))
  const key = record('AES256')
  const added = repo.add(key)
  const damaged = repo.damageImage(0)
  const checked = repo.verifyRecords()
  await added
  await damaged
  t.same(await checked, ['slot 0: generation or serial is zero'], 'each waits for the one before it')
})
