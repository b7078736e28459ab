import { createCipheriv } from 'node:crypto'
import { access, mkdir, open, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { DiskLockedError, DiskNotFormattedError, DiskReadOnlyError, FormatCancelledError } from '../hal/errors.js'
import { HalCorruptError, openHal, type DiskCipher, type FormatHoldPoint, type Hal } from '../hal/index.js'
import { SYSTEM_RESERVED_SECTORS } from '../hal/sim/device-identity.js'
import { setSimFormatHold, simFormatHeld } from '../hal/sim/format-hold.js'
import { builtFirmware } from './helpers/device.js'
import { until } from './helpers/until.js'

const SECTOR = 512
/** A small Disk 1, so that its whole image can be searched; Disk 0 takes the rest of the card (sparse). */
const DISK1_SECTORS = 4096
/** Past the 1 MiB head that a format writes, so the sectors start as holes. */
const FAR = 3000
const CIPHERS: DiskCipher[] = ['AES-CTR', 'AES-XTS']
const MARKER = 'HEM-PLAINTEXT-MARKER'
/** What the enclave binds a sealed Disk 1 key to (hal/sim/sim-disks.ts). */
const DISK_KEY_AAD = Buffer.from('hemd disk1 key v1')

const text = (sectors: number, label = MARKER) => Buffer.alloc(sectors * SECTOR, `${label} `)
const zeros = (sectors: number) => Buffer.alloc(sectors * SECTOR)
const image = (dataDir: string, disk: 0 | 1) => join(dataDir, 'disks', `disk${disk}.img`)

/** The bytes of `count` sectors as they rest in the image file. */
async function stored(dataDir: string, disk: 0 | 1, sector: number, count: number): Promise<Buffer> {
  const file = await open(image(dataDir, disk), 'r')
  try {
    const bytes = Buffer.alloc(count * SECTOR)
    await file.read(bytes, 0, bytes.length, sector * SECTOR)
    return bytes
  } finally {
    await file.close()
  }
}

async function openP(dataDir: string): Promise<Hal> {
  return openHal({ variant: 'P', dataDir, firmware: await builtFirmware() })
}

async function format(hal: Hal): Promise<void> {
  await hal.disks!.format(hal.storage.capacitySectors - SYSTEM_RESERVED_SECTORS - DISK1_SECTORS, () => undefined)
}

/** A P device with freshly formatted disks, closed when the test ends. */
async function formatted(t: {
  testdir(): string
  teardown(fn: () => unknown): void
}): Promise<{ hal: Hal; dataDir: string }> {
  const dataDir = t.testdir()
  const hal = await openP(dataDir)
  t.teardown(() => hal.close())
  await format(hal)
  return { hal, dataDir }
}

t.test('nothing to unlock before a format; the arguments of open are checked', async (t) => {
  const dataDir = t.testdir()
  const hal = await openP(dataDir)
  t.teardown(() => hal.close())
  const disks = hal.disks!
  await t.rejects(disks.open(0, 'rw'), DiskNotFormattedError)
  await t.rejects(disks.open(1, 'ro', 'AES-XTS'), DiskNotFormattedError)
  await t.rejects(
    disks.format(2047, () => undefined),
    { name: 'HalError', message: /does not fit the card/ },
    'at least 1 MiB a disk',
  )
  await t.rejects(disks.format(2048, 'progress' as never), TypeError)
  await format(hal)
  await t.rejects(disks.open(2 as never, 'rw'), RangeError)
  await t.rejects(disks.open(0, 'wr' as never), RangeError)
  await t.rejects(disks.open(0, 'rw', 'AES-XTS'), {
    name: 'RangeError',
    message: 'Disk 0 is not encrypted: it takes no cipher',
  })
  await t.rejects(disks.open(1, 'rw'), { name: 'RangeError', message: /Disk 1 needs its cipher/ })
  await t.rejects(disks.open(1, 'rw', 'AES-GCM' as never), RangeError)
  const handle = await disks.open(1, 'ro', 'AES-CTR')
  t.match(handle, { disk: 1, sectors: DISK1_SECTORS, mode: 'ro' })
  await handle.close()
})

t.test('Disk 0: what is written reads back, and rests on the card in the clear', async (t) => {
  const { hal, dataDir } = await formatted(t)
  const disk = await hal.disks!.open(0, 'rw')
  t.equal(disk.sectors, hal.disks!.layout()!.disk0Sectors)
  const data = text(3)
  await disk.write(FAR, data)
  t.same(Buffer.from(await disk.read(FAR, 3)), data)
  t.same(Buffer.from(await disk.read(FAR + 1, 1)), data.subarray(SECTOR, 2 * SECTOR), 'any sector on its own')
  t.same(Buffer.from(await disk.read(0, 4)), zeros(4), 'a formatted head reads as zeros')
  t.same(Buffer.from(await disk.read(disk.sectors - 2, 2)), zeros(2), 'so does a hole')
  await disk.flush()
  t.equal(disk.locked, false)
  await disk.close()
  t.equal(disk.locked, true)
  await t.rejects(disk.flush(), DiskLockedError, 'a locked disk has nothing to flush')
  t.same(await stored(dataDir, 0, FAR, 3), data, 'Disk 0 is not encrypted')
})

t.test('Disk 1: encrypted at rest under either cipher; user zeros are encrypted too', async (t) => {
  const { hal, dataDir } = await formatted(t)
  const data = text(4)
  const atRest: Record<string, Buffer> = {}
  for (const cipher of CIPHERS) {
    const disk = await hal.disks!.open(1, 'rw', cipher)
    await disk.write(FAR, data)
    await disk.write(10, data.subarray(0, SECTOR))
    await disk.write(FAR + 8, zeros(1))
    t.same(Buffer.from(await disk.read(FAR, 4)), data, `${cipher} round trip`)
    t.same(Buffer.from(await disk.read(10, 1)), data.subarray(0, SECTOR), `${cipher}: a sector in the formatted head`)
    t.same(Buffer.from(await disk.read(FAR + 8, 1)), zeros(1), `${cipher}: written zeros read as zeros`)
    t.same(Buffer.from(await disk.read(FAR + 20, 2)), zeros(2), `${cipher}: a sector never written reads as zeros`)
    await disk.close()

    const whole = await readFile(image(dataDir, 1))
    t.equal(whole.length, DISK1_SECTORS * SECTOR)
    t.notOk(whole.includes(Buffer.from(MARKER)), `${cipher}: the plaintext is nowhere in the image`)
    atRest[cipher] = await stored(dataDir, 1, FAR, 4)
    for (let i = 0; i < 4; i++) {
      t.not(
        atRest[cipher]!.subarray(i * SECTOR, (i + 1) * SECTOR).toString('hex'),
        data.subarray(i * SECTOR, (i + 1) * SECTOR).toString('hex'),
      )
    }
    t.notSame(
      await stored(dataDir, 1, FAR + 8, 1),
      zeros(1),
      `${cipher}: the zeros a user wrote are not stored as zeros`,
    )
    t.same(await stored(dataDir, 1, FAR + 20, 1), zeros(1), `${cipher}: a sector never written is a hole`)
  }
  t.not(atRest['AES-CTR']!.toString('hex'), atRest['AES-XTS']!.toString('hex'), 'the two ciphers store different bytes')
  const sector0 = atRest['AES-XTS']!.subarray(0, SECTOR)
  t.not(
    atRest['AES-XTS']!.subarray(SECTOR, 2 * SECTOR).toString('hex'),
    sector0.toString('hex'),
    'equal sectors are stored differently',
  )

  const other = await hal.disks!.open(1, 'ro', 'AES-CTR')
  t.notSame(
    Buffer.from(await other.read(FAR, 1)),
    data.subarray(0, SECTOR),
    'XTS sectors do not read as plaintext through CTR',
  )
  await other.close()
})

t.test('the at-rest format: XTS tweak and CTR counter per sector, under the sealed 64-byte key', async (t) => {
  const { hal, dataDir } = await formatted(t)
  const sealedKey = await readFile(join(dataDir, 'disks', 'disk1.key'))
  // Group-writable for --split as separate users (auth formats, storage opens); never for others.
  t.equal((await stat(join(dataDir, 'disks', 'disk1.key'))).mode & 0o707, 0o600)
  const key = Buffer.from(await hal.enclave.sealer('disks').unseal(sealedKey, DISK_KEY_AAD))
  t.equal(key.length, 64)
  t.notOk(sealedKey.includes(key.subarray(0, 16)), 'the key does not rest in the clear')
  const data = text(2, 'convention')
  const sector = 1234
  const encrypt = (algorithm: string, k: Buffer, iv: Buffer, plain: Buffer) => {
    const cipher = createCipheriv(algorithm, k, iv)
    return Buffer.concat([cipher.update(plain), cipher.final()])
  }
  for (const cipher of CIPHERS) {
    const disk = await hal.disks!.open(1, 'rw', cipher)
    await disk.write(sector, data)
    await disk.close()
    const atRest = await stored(dataDir, 1, sector, 2)
    for (const i of [0, 1]) {
      const iv = Buffer.alloc(16)
      if (cipher === 'AES-XTS') iv.writeBigUInt64LE(BigInt(sector + i), 0)
      else iv.writeBigUInt64BE(BigInt((sector + i) * 32), 8)
      const expected =
        cipher === 'AES-XTS'
          ? encrypt('aes-256-xts', key, iv, data.subarray(i * SECTOR, (i + 1) * SECTOR))
          : encrypt('aes-256-ctr', key.subarray(0, 32), iv, data.subarray(i * SECTOR, (i + 1) * SECTOR))
      t.same(atRest.subarray(i * SECTOR, (i + 1) * SECTOR), expected, `${cipher}, sector ${sector + i}`)
    }
  }
})

t.test('read-only refuses writes; whole sectors within bounds only', async (t) => {
  const { hal } = await formatted(t)
  for (const [disk, cipher] of [
    [0, undefined],
    [1, 'AES-XTS'],
  ] as const) {
    const ro = await hal.disks!.open(disk, 'ro', cipher)
    await t.rejects(ro.write(FAR, text(1)), DiskReadOnlyError)
    t.same(Buffer.from(await ro.read(FAR, 1)), zeros(1), 'nothing was written')
    await ro.close()

    const rw = await hal.disks!.open(disk, 'rw', cipher)
    const last = rw.sectors - 1
    await rw.write(last, text(1))
    t.same(Buffer.from(await rw.read(last, 1)), text(1), 'the last sector')
    await t.rejects(rw.write(FAR, text(1).subarray(0, 511)), {
      name: 'RangeError',
      message: 'the data must be whole 512-byte sectors',
    })
    await t.rejects(rw.write(FAR, text(2).subarray(0, 700)), RangeError)
    await t.rejects(rw.write(FAR, new Uint8Array(0)), RangeError)
    await t.rejects(rw.write(FAR, 'text' as never), TypeError)
    await t.rejects(rw.write(last, text(2)), {
      name: 'RangeError',
      message: `the sectors lie past the end of Disk ${disk}`,
    })
    await t.rejects(rw.write(-1, text(1)), RangeError)
    await t.rejects(rw.write(1.5, text(1)), RangeError)
    await t.rejects(rw.write(0, text(2049)), RangeError, 'at most 1 MiB a call')
    await t.rejects(rw.read(rw.sectors, 1), RangeError)
    await t.rejects(rw.read(0, 0), RangeError)
    await t.rejects(rw.read(0, 2049), RangeError)
    await t.rejects(rw.read(Number.NaN, 1), RangeError)
    t.equal((await rw.read(0, 2048)).length, 2048 * SECTOR, 'exactly 1 MiB is fine')
    await rw.close()
  }
})

t.test('a closed handle is locked; a format or an erase locks every open handle', async (t) => {
  const { hal } = await formatted(t)
  const disk = await hal.disks!.open(1, 'rw', 'AES-CTR')
  await disk.close()
  await t.rejects(disk.read(0, 1), { name: 'DiskLockedError', message: 'Disk 1 is locked' })
  await t.rejects(disk.write(0, text(1)), DiskLockedError)
  await disk.close()
  await t.rejects(disk.read(0, 1), DiskLockedError, 'a second close does nothing: still locked')

  const open0 = await hal.disks!.open(0, 'rw')
  const open1 = await hal.disks!.open(1, 'ro', 'AES-XTS')
  await format(hal)
  await t.rejects(open0.read(0, 1), DiskLockedError, 'locked by a format')
  await t.rejects(open1.read(0, 1), DiskLockedError)
  const again = await hal.disks!.open(0, 'ro')
  await hal.disks!.erase()
  await t.rejects(again.read(0, 1), DiskLockedError, 'locked by an erase')
})

t.test('after the HAL is opened again, both disks read the same plaintext', async (t) => {
  const dataDir = t.testdir()
  const first = await openP(dataDir)
  await format(first)
  const data0 = text(2, 'disk zero')
  const data1 = text(2, 'disk one')
  const disk0 = await first.disks!.open(0, 'rw')
  await disk0.write(FAR, data0)
  await disk0.close()
  const disk1 = await first.disks!.open(1, 'rw', 'AES-XTS')
  await disk1.write(FAR, data1)
  await disk1.close()
  await first.close()

  const second = await openP(dataDir)
  t.teardown(() => second.close())
  const again0 = await second.disks!.open(0, 'ro')
  t.same(Buffer.from(await again0.read(FAR, 2)), data0)
  await again0.close()
  const again1 = await second.disks!.open(1, 'ro', 'AES-XTS')
  t.same(Buffer.from(await again1.read(FAR, 2)), data1)
  await again1.close()
})

t.test('a reformat or an erase makes the old Disk 1 bytes unreadable', async (t) => {
  const { hal, dataDir } = await formatted(t)
  const data = text(2)
  const disk = await hal.disks!.open(1, 'rw', 'AES-XTS')
  await disk.write(FAR, data)
  await disk.close()
  const oldImage = await readFile(image(dataDir, 1))
  const oldKey = await readFile(join(dataDir, 'disks', 'disk1.key'))

  await format(hal)
  t.not((await readFile(join(dataDir, 'disks', 'disk1.key'))).toString('hex'), oldKey.toString('hex'), 'a new key')
  const fresh = await hal.disks!.open(1, 'ro', 'AES-XTS')
  t.same(Buffer.from(await fresh.read(FAR, 2)), zeros(2), 'the new disk is empty')
  await fresh.close()
  // Even with the old bytes put back, the new key does not read them.
  await writeFile(image(dataDir, 1), oldImage)
  const restored = await hal.disks!.open(1, 'ro', 'AES-XTS')
  const read = Buffer.from(await restored.read(FAR, 2))
  t.notSame(read, data)
  t.notOk(read.includes(Buffer.from(MARKER)))
  await restored.close()

  await hal.disks!.erase()
  t.equal(hal.disks!.layout(), undefined)
  await t.rejects(access(join(dataDir, 'disks', 'disk1.key')), { code: 'ENOENT' }, 'the key is gone')
  await t.rejects(hal.disks!.open(1, 'ro', 'AES-XTS'), DiskNotFormattedError)
})

t.test('a missing or altered Disk 1 key or image is reported, never replaced', async (t) => {
  const { hal, dataDir } = await formatted(t)
  const keyPath = join(dataDir, 'disks', 'disk1.key')
  const sealed = await readFile(keyPath)
  sealed[sealed.length - 1]! ^= 1
  await writeFile(keyPath, sealed)
  await t.rejects(hal.disks!.open(1, 'ro', 'AES-CTR'), { name: 'HalCorruptError', message: /does not unseal/ })
  t.same(await readFile(keyPath), sealed, 'left as it was')
  const disk0 = await hal.disks!.open(0, 'ro')
  t.equal((await disk0.read(0, 1)).length, SECTOR, 'Disk 0 needs no key: it opens and reads')
  await disk0.close()

  await rm(keyPath)
  await t.rejects(hal.disks!.open(1, 'ro', 'AES-CTR'), { name: 'HalCorruptError', message: /key is missing/ })
  await writeFile(image(dataDir, 0), 'short')
  await t.rejects(hal.disks!.open(0, 'ro'), { name: 'HalCorruptError', message: /does not match the layout/ })
  await rm(image(dataDir, 0))
  await t.rejects(hal.disks!.open(0, 'ro'), { name: 'HalCorruptError', message: /image of Disk 0 is missing/ })
})

t.test(
  'a Disk 1 key of the wrong length, an image cut short or replaced, or a damaged layout is reported',
  async (t) => {
    const { hal, dataDir } = await formatted(t)
    const disks = hal.disks!
    const keyPath = join(dataDir, 'disks', 'disk1.key')
    const original = await readFile(keyPath)
    // Sealed by the enclave for the disks, so it unseals: only its length gives it away.
    await writeFile(keyPath, await hal.enclave.sealer('disks').seal(new Uint8Array(32), DISK_KEY_AAD))
    await t.rejects(disks.open(1, 'ro', 'AES-XTS'), { name: 'HalCorruptError', message: /key is not 64 bytes/ })
    await rm(keyPath)
    await mkdir(keyPath)
    await t.rejects(disks.open(1, 'ro', 'AES-XTS'), { code: 'EISDIR' }, 'an unreadable key is no missing key')
    await rm(keyPath, { recursive: true })
    await writeFile(keyPath, original)

    const handle = await disks.open(1, 'rw', 'AES-CTR')
    await handle.write(FAR, text(1))
    await truncate(image(dataDir, 1), FAR * SECTOR)
    await t.rejects(handle.read(FAR, 1), { name: 'HalCorruptError', message: /Disk 1 is shorter than its layout/ })
    await handle.close()
    await rm(image(dataDir, 1))
    await t.rejects(disks.open(1, 'ro', 'AES-CTR'), { name: 'HalCorruptError', message: /image of Disk 1 is missing/ })
    await mkdir(image(dataDir, 1))
    await t.rejects(
      disks.open(1, 'rw', 'AES-CTR'),
      { code: 'EISDIR' },
      'an image that cannot be opened is no missing one',
    )

    const layoutPath = join(dataDir, 'disks', 'layout.json')
    await writeFile(layoutPath, JSON.stringify({ disk0Sectors: 'all', disk1Sectors: DISK1_SECTORS }))
    t.throws(() => disks.layout(), { name: 'HalCorruptError', message: /layout\.json is corrupt/ })
    await t.rejects(disks.open(0, 'ro'), HalCorruptError)
    await rm(layoutPath)
    await mkdir(layoutPath)
    t.throws(() => disks.layout(), { code: 'EISDIR' }, 'a layout that cannot be read is no missing one')
  },
)

t.test('open, format and erase take turns: an open never straddles the bytes changing', async (t) => {
  const { hal } = await formatted(t)
  const disks = hal.disks!
  const before = disks.open(1, 'rw', 'AES-XTS')
  const erasing = disks.erase()
  const after = disks.open(1, 'rw', 'AES-XTS')
  await t.rejects((await before).read(0, 1), DiskLockedError, 'opened first, then locked by the erase')
  await erasing
  await t.rejects(after, DiskNotFormattedError, 'opened after the erase')
  const formatting = format(hal)
  const handle = await disks.open(0, 'ro')
  await formatting
  t.same(Buffer.from(await handle.read(0, 1)), zeros(1), 'opened once the format finished')
  await handle.close()
})

t.test(
  'a format cancelled where it is held: as it was before its first write, unformatted after it, done at its end',
  async (t) => {
    const { hal, dataDir } = await formatted(t)
    const disks = hal.disks!
    const first = disks.layout()!
    const disk0Sectors = first.disk0Sectors - DISK1_SECTORS
    const second = { disk0Sectors, disk1Sectors: first.disk1Sectors + DISK1_SECTORS }
    const expected: [FormatHoldPoint, typeof first | undefined][] = [
      ['start', first],
      ['middle', undefined],
      ['end', second],
    ]
    for (const [point, layout] of expected) {
      await setSimFormatHold(dataDir, point)
      const controller = new AbortController()
      const formatting = disks.format(disk0Sectors, () => undefined, controller.signal)
      await until(`held at ${point}`, async () => (await simFormatHeld(dataDir)) === point)
      controller.abort('stop')
      if (point === 'end') await formatting
      else await t.rejects(formatting, FormatCancelledError, `cancelled at ${point}`)
      t.same(disks.layout(), layout, `cancelled at ${point}: ${layout ? JSON.stringify(layout) : 'no layout'}`)
      t.equal(await simFormatHeld(dataDir), undefined, 'no longer held')
    }
    await setSimFormatHold(dataDir, undefined)
    const aborted = AbortSignal.abort('stop')
    await t.rejects(
      disks.format(disk0Sectors, () => undefined, aborted),
      FormatCancelledError,
      'cancelled before it ran',
    )
    t.same(disks.layout(), second, 'which changed nothing')
  },
)
