import { access, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { HalCorruptError, openHal } from '../hal/index.js'
import { FileKeySlotMedia } from '../hal/sim/key-slot-media.js'
import { builtFirmware } from './helpers/device.js'

const zeros = (n: number) => new Uint8Array(n)

t.test('a missing file reads as empty slots and is not created by reading', async (t) => {
  const dir = join(t.testdir(), 'keys')
  const media = new FileKeySlotMedia(dir)
  t.equal(media.slotCount, 1024)
  t.equal(media.slotSize, 512)
  const slots = await media.readAll()
  t.equal(slots.length, 1024)
  t.ok(slots.every((slot) => slot.length === 512 && slot.every((byte) => byte === 0)))
  await t.rejects(access(dir), { code: 'ENOENT' })
  await media.close()
})

t.test('a slot is written zero-padded at its place, durably, in a private file', async (t) => {
  const dir = join(t.testdir(), 'keys')
  const media = new FileKeySlotMedia(dir)
  await media.write(3, Uint8Array.from([1, 2, 3]))
  await media.write(1, new Uint8Array(512).fill(9))
  t.equal((await stat(dir)).mode & 0o777, 0o700)
  const file = await stat(join(dir, 'slots.bin'))
  t.equal(file.mode & 0o777, 0o600)
  t.equal(file.size, 4 * 512, 'nothing past the last written slot')
  const slots = await media.readAll()
  t.same(slots[3], Uint8Array.from([1, 2, 3, ...zeros(509)]))
  t.same(slots[1], new Uint8Array(512).fill(9))
  t.same(slots[0], zeros(512), 'a slot never written reads as zeros')
  await media.write(1, Uint8Array.from([7]))
  t.same(
    (await media.readAll())[1],
    Uint8Array.from([7, ...zeros(511)]),
    'a shorter write leaves nothing of the longer one',
  )
  await media.close()

  const again = new FileKeySlotMedia(dir)
  t.same((await again.readAll())[3], Uint8Array.from([1, 2, 3, ...zeros(509)]), 'across instances')
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

t.test('out-of-range indexes, oversized or non-byte data are refused and write nothing', async (t) => {
  const dir = t.testdir()
  const media = new FileKeySlotMedia(dir, { slotCount: 4, slotSize: 16 })
  for (const index of [-1, 4, 1.5, Number.NaN]) {
    await t.rejects(media.write(index, Uint8Array.of(1)), RangeError, `index ${index}`)
  }
  await t.rejects(media.write(0, new Uint8Array(17)), RangeError, 'data longer than a slot')
  await t.rejects(media.write(0, 'text' as unknown as Uint8Array), TypeError, 'not bytes')
  await t.rejects(access(join(dir, 'slots.bin')), { code: 'ENOENT' })
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
  t.notOk((await readFile(join(dir, 'slots.bin'))).includes(marker), 'the old bytes are gone from the file')
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
  await writeFile(join(dir, 'slots.bin'), new Uint8Array(4 * 16 + 1))
  await t.rejects(new FileKeySlotMedia(dir, { slotCount: 4, slotSize: 16 }).readAll(), HalCorruptError)
})

t.test('the sim HAL keeps key slots in <data>/keys/slots.bin and closes them with the device', async (t) => {
  const dataDir = t.testdir()
  const firmware = await builtFirmware()
  const hal = await openHal({ variant: 'E', dataDir, firmware })
  t.equal(hal.keySlots.slotCount, 1024)
  t.equal(hal.keySlots.slotSize, 512)
  await hal.keySlots.write(5, Buffer.from('slot five'))
  await hal.close()
  const bytes = await readFile(join(dataDir, 'keys', 'slots.bin'))
  t.equal(bytes.subarray(5 * 512, 5 * 512 + 9).toString(), 'slot five')
  const again = await openHal({ variant: 'E', dataDir, firmware })
  t.equal(Buffer.from((await again.keySlots.readAll())[5]!.subarray(0, 9)).toString(), 'slot five', 'after a reboot')
  await again.close()
})
