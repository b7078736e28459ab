import { access, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { HalCorruptError, openHal } from '../hal/index.js'
import { setSimDiskFull } from '../hal/sim/disk-space.js'
import { FileKeySlotMedia } from '../hal/sim/key-slot-media.js'
import { builtFirmware } from './helpers/device.js'

const zeros = (n: number) => new Uint8Array(n)

t.test('a missing file reads as empty slots and is not created by reading', async (t) => {
  const dir = join(t.testdir(), 'keys')
  const media = new FileKeySlotMedia(dir)
  t.equal(media.slotCount, 1024)
  t.equal(media.slotSize, 4096)
  const slots = await media.readAll()
  t.equal(slots.length, 1024)
  t.ok(slots.every((slot) => slot.length === 4096 && slot.every((byte) => byte === 0)))
  await t.rejects(access(dir), { code: 'ENOENT' })
  await media.close()
})

t.test('a slot is written zero-padded at its place, durably, in a private file', async (t) => {
  const dir = join(t.testdir(), 'keys')
  const media = new FileKeySlotMedia(dir)
  await media.write(3, Uint8Array.from([1, 2, 3]))
  await media.write(1, new Uint8Array(4096).fill(9))
  t.equal((await stat(dir)).mode & 0o777, 0o700)
  const file = await stat(join(dir, 'slots-4096.bin'))
  t.equal(file.mode & 0o777, 0o600)
  t.equal(file.size, 4 * 4096, 'nothing past the last written slot')
  const slots = await media.readAll()
  t.same(slots[3], Uint8Array.from([1, 2, 3, ...zeros(4093)]))
  t.same(slots[1], new Uint8Array(4096).fill(9))
  t.same(slots[0], zeros(4096), 'a slot never written reads as zeros')
  await media.write(1, Uint8Array.from([7]))
  t.same(
    (await media.readAll())[1],
    Uint8Array.from([7, ...zeros(4095)]),
    'a shorter write leaves nothing of the longer one',
  )
  await media.close()

  const again = new FileKeySlotMedia(dir)
  t.same((await again.readAll())[3], Uint8Array.from([1, 2, 3, ...zeros(4093)]), 'across instances')
  await again.close()
})

t.test('concurrent writes to different slots all land; close and reuse', async (t) => {
  const media = new FileKeySlotMedia(t.testdir(), { slotCount: 16, slotSize: 32 })
  await Promise.all(Array.from({ length: 16 }, (_, i) => media.write(i, Uint8Array.of(i + 1))))
  t.same(
    (await media.readAll()).map((slot) => slot[0]),
    Array.from({ length: 16 }, (_, i) => i + 1),
  )
  await media.close()
  await media.close()
  await media.write(0, Uint8Array.of(42))
  t.equal((await media.readAll())[0]?.[0], 42, 'a closed media opens its file again on the next write')
  await media.close()
})

t.test('the slots read as one image: any range, zeros where nothing was written, nothing outside', async (t) => {
  const dir = join(t.testdir(), 'keys')
  const media = new FileKeySlotMedia(dir, { slotCount: 4, slotSize: 16 })
  t.same(await media.read(0, 64), zeros(64), 'no file yet: zeros')
  await media.write(1, Uint8Array.from([1, 2, 3]))
  t.same(await media.read(14, 6), Uint8Array.from([0, 0, 1, 2, 3, 0]), 'a range across two slots')
  t.same(await media.read(40, 24), zeros(24), 'past the end of the sparse file: zeros')
  t.same(await media.read(64, 0), zeros(0), 'an empty read at the end')
  t.same(await media.read(0, 64), Buffer.concat(await media.readAll()), 'the image is the slots end to end')
  for (const [offset, length] of [
    [-1, 1],
    [0, 65],
    [63, 2],
    [1.5, 1],
    [0, -1],
    [Number.NaN, 1],
  ] as const) {
    await t.rejects(media.read(offset, length), RangeError, `${offset}, ${length}`)
  }
  await writeFile(join(dir, 'slots-4096.bin'), new Uint8Array(65))
  await t.rejects(media.read(0, 1), HalCorruptError, 'a file made for another geometry')
  await media.close()
})

t.test('out-of-range indexes, oversized or non-byte data are refused and write nothing', async (t) => {
  const dir = t.testdir()
  const media = new FileKeySlotMedia(dir, { slotCount: 4, slotSize: 16 })
  for (const index of [-1, 4, 1.5, Number.NaN]) {
    await t.rejects(media.write(index, Uint8Array.of(1)), RangeError, `index ${index}`)
  }
  await t.rejects(media.write(0, new Uint8Array(17)), RangeError, 'data longer than a slot')
  await t.rejects(media.write(0, 'text' as unknown as Uint8Array), TypeError, 'not bytes')
  await t.rejects(access(join(dir, 'slots-4096.bin')), { code: 'ENOENT' })
  t.throws(() => new FileKeySlotMedia(dir, { slotCount: 0 }), RangeError)
  t.throws(() => new FileKeySlotMedia(dir, { slotSize: 1.5 }), RangeError)
  await media.close()
})

t.test('erase leaves every slot empty and none of the old bytes in the file', async (t) => {
  const dir = t.testdir()
  const media = new FileKeySlotMedia(dir, { slotCount: 8, slotSize: 64 })
  const marker = Buffer.from('sealed-key-material')
  await media.write(2, marker)
  await media.write(7, marker)
  await media.erase()
  t.notOk((await readFile(join(dir, 'slots-4096.bin'))).includes(marker), 'the old bytes are gone from the file')
  t.ok(
    (await media.readAll()).every((slot) => slot.every((byte) => byte === 0)),
    'every slot reads empty',
  )
  await media.write(0, marker)
  t.same((await media.readAll())[0]?.subarray(0, marker.length), marker, 'writes work after an erase')
  await media.close()

  const fresh = new FileKeySlotMedia(join(dir, 'never-written'))
  await fresh.erase()
  t.ok(
    (await fresh.readAll()).every((slot) => slot.every((byte) => byte === 0)),
    'erasing nothing is fine',
  )
  await fresh.close()
})

t.test('a media that cannot open its file fails the write and tries again on the next', async (t) => {
  const dir = join(t.testdir(), 'keys')
  await writeFile(dir, 'in the way')
  const media = new FileKeySlotMedia(dir, { slotCount: 2, slotSize: 8 })
  await t.rejects(media.write(0, Uint8Array.of(1)), { code: 'EEXIST' })
  await rm(dir)
  await media.write(0, Uint8Array.of(1))
  t.equal((await media.readAll())[0]?.[0], 1)
  await media.close()
})

t.test('a file longer than the slots is not read as slots', async (t) => {
  const dir = t.testdir()
  await writeFile(join(dir, 'slots-4096.bin'), new Uint8Array(4 * 16 + 1))
  await t.rejects(new FileKeySlotMedia(dir, { slotCount: 4, slotSize: 16 }).readAll(), HalCorruptError)
})

t.test('the sim HAL keeps key slots in <data>/keys/slots-4096.bin and closes them with the device', async (t) => {
  const dataDir = t.testdir()
  const firmware = await builtFirmware()
  const hal = await openHal({ variant: 'E', dataDir, firmware })
  t.equal(hal.keySlots.slotCount, 1024)
  t.equal(hal.keySlots.slotSize, 4096)
  await hal.keySlots.write(5, Buffer.from('slot five'))
  await hal.close()
  const bytes = await readFile(join(dataDir, 'keys', 'slots-4096.bin'))
  t.equal(bytes.subarray(5 * 4096, 5 * 4096 + 9).toString(), 'slot five')
  const again = await openHal({ variant: 'E', dataDir, firmware })
  t.equal(Buffer.from((await again.keySlots.readAll())[5]!.subarray(0, 9)).toString(), 'slot five', 'after a reboot')
  await again.close()
})

/** A file of the 512-byte slots of before: slot i holds `i + 1` repeated over `length` bytes, for the listed slots. */
function legacyImage(filled: number[], length = 512): Buffer {
  const image = Buffer.alloc((Math.max(...filled) + 1) * 512)
  for (const i of filled) image.fill(i + 1, i * 512, i * 512 + length)
  return image
}

async function expectMigrated(t: Test, dir: string, filled: number[], length = 512): Promise<void> {
  await t.rejects(access(join(dir, 'slots.bin')), { code: 'ENOENT' }, 'the 512-byte file is gone')
  t.same(
    (await readdir(dir)).filter((name) => name.endsWith('.tmp')),
    [],
    'no temporary file is left',
  )
  const media = new FileKeySlotMedia(dir)
  const slots = await media.readAll()
  await media.close()
  slots.forEach((slot, i) => {
    const expected = new Uint8Array(4096)
    if (filled.includes(i)) expected.fill(i + 1, 0, length)
    if (!Buffer.from(slot).equals(expected)) t.fail(`slot ${i} is not what slot ${i} of the old file was`)
  })
  t.pass(`slots ${filled.join(', ')} moved to their places, every other slot empty`)
}

t.test('a file of 512-byte slots is migrated at first use: slot i to slot i, atomically', async (t) => {
  const dir = t.testdir()
  const old = legacyImage([0, 3, 1023])
  await writeFile(join(dir, 'slots.bin'), old)
  const media = new FileKeySlotMedia(dir)
  const slots = await media.readAll()
  t.same(Buffer.from(slots[3]!.subarray(0, 512)), old.subarray(3 * 512, 4 * 512), 'read through the migration')
  const file = await stat(join(dir, 'slots-4096.bin'))
  t.equal(file.mode & 0o777, 0o600)
  t.equal(file.size, 1024 * 4096)
  await media.close()
  await expectMigrated(t, dir, [0, 3, 1023])
  const again = new FileKeySlotMedia(dir)
  await again.write(2, Uint8Array.of(42))
  await again.close()
  const after = new FileKeySlotMedia(dir)
  t.equal((await after.readAll())[2]![0], 42, 'a write after the migration stays: it happens once')
  await after.close()
})

t.test('a write or an erase migrates first too', async (t) => {
  const dir = t.testdir()
  await writeFile(join(dir, 'slots.bin'), legacyImage([1, 2]))
  const media = new FileKeySlotMedia(dir)
  await media.write(1, Uint8Array.of(9))
  await media.close()
  const slots = await new FileKeySlotMedia(dir).readAll()
  t.same([slots[1]![0], slots[1]![1], slots[2]![511], slots[2]![512]], [9, 0, 3, 0])

  const erased = t.testdir()
  await writeFile(join(erased, 'slots.bin'), legacyImage([0]))
  const wiping = new FileKeySlotMedia(erased)
  await wiping.erase()
  await wiping.close()
  await t.rejects(access(join(erased, 'slots.bin')), { code: 'ENOENT' }, 'no key survives an erase in the old file')
})

t.test('a migration interrupted at any step loses nothing', async (t) => {
  await t.test('a crash while the new file was written: it starts over', async (t) => {
    const dir = t.testdir()
    await writeFile(join(dir, 'slots.bin'), legacyImage([0, 5]))
    await writeFile(join(dir, 'slots-4096.bin.1234.abcd.tmp'), new Uint8Array(100).fill(7))
    await new FileKeySlotMedia(dir).readAll()
    await expectMigrated(t, dir, [0, 5])
  })
  await t.test('a crash after the rename: the old file is only removed', async (t) => {
    const dir = t.testdir()
    await writeFile(join(dir, 'slots.bin'), legacyImage([0, 5]))
    const image = Buffer.alloc(6 * 4096)
    image.fill(1, 0, 512)
    image.fill(6, 5 * 4096, 5 * 4096 + 512)
    await writeFile(join(dir, 'slots-4096.bin'), image)
    // The old file no longer matters: had the device written since, the new file would be the one that counts.
    await writeFile(join(dir, 'slots.bin'), legacyImage([0, 5, 7]))
    await new FileKeySlotMedia(dir).readAll()
    await expectMigrated(t, dir, [0, 5])
  })
  await t.test('a crash while the old file was overwritten', async (t) => {
    const dir = t.testdir()
    await writeFile(join(dir, 'slots.bin'), legacyImage([0, 5]))
    await new FileKeySlotMedia(dir).readAll()
    await writeFile(join(dir, 'slots.bin'), Buffer.alloc(300))
    await new FileKeySlotMedia(dir).readAll()
    await expectMigrated(t, dir, [0, 5])
  })
  await t.test('a full disk: the old file stays whole, the next use migrates', async (t) => {
    const dataDir = t.testdir()
    await writeFile(join(dataDir, 'device.json'), '{}')
    const dir = join(dataDir, 'keys')
    await mkdir(dir)
    const old = legacyImage([0, 5])
    await writeFile(join(dir, 'slots.bin'), old)
    await setSimDiskFull(dataDir, true)
    const media = new FileKeySlotMedia(dir)
    await t.rejects(media.readAll(), { code: 'ENOSPC' })
    t.same(await readFile(join(dir, 'slots.bin')), old, 'the old file as it was')
    await t.rejects(access(join(dir, 'slots-4096.bin')), { code: 'ENOENT' }, 'no new file')
    await setSimDiskFull(dataDir, false)
    await media.readAll()
    await media.close()
    await expectMigrated(t, dir, [0, 5])
  })
})

t.test('an old file that does not fit the new geometry is refused and left alone', async (t) => {
  const dir = t.testdir()
  const old = legacyImage([4])
  await writeFile(join(dir, 'slots.bin'), old)
  await t.rejects(new FileKeySlotMedia(dir, { slotCount: 4 }).readAll(), HalCorruptError, 'more slots than the media')
  await t.rejects(new FileKeySlotMedia(dir, { slotSize: 256 }).readAll(), HalCorruptError, 'slots smaller than 512')
  t.same(await readFile(join(dir, 'slots.bin')), old)
})
