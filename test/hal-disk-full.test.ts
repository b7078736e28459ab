// The sim HAL on a full data disk: every write of device state fails as ENOSPC does (tearing
// what it can), reads keep working, and everything works again once the space returns.
import 'reflect-metadata'
import { generateKeyPairSync } from 'node:crypto'
import { access, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { openHal, type Hal, type SignedComponent } from '../hal/index.js'
import { writeFileAtomic } from '../hal/sim/atomic-file.js'
import { SYSTEM_RESERVED_SECTORS } from '../hal/sim/device-identity.js'
import { SimDiskSpace, diskSpaceHolding, noSpaceError, setSimDiskFull } from '../hal/sim/disk-space.js'
import { issue, makeCa, pkcs8 } from './helpers/x509-fixtures.js'

const firmware: SignedComponent = { version: '2.0.0', publicKey: new Uint8Array(32), signature: new Uint8Array(64) }
const ENOSPC = { code: 'ENOSPC', errno: -28 }
const SECTOR = 512

async function open(t: { teardown(fn: () => unknown): void }, dataDir: string): Promise<Hal> {
  const hal = await openHal({ variant: 'P', dataDir, firmware })
  t.teardown(() => hal.close())
  return hal
}

/** Fills the disk for the rest of the test (or until the test gives the space back). */
async function fill(t: { teardown(fn: () => unknown): void }, dataDir: string): Promise<void> {
  await setSimDiskFull(dataDir, true)
  t.teardown(() => setSimDiskFull(dataDir, false))
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

t.test('the flag is a file of the data dir; the error is what node throws on a full disk', async (t) => {
  const dataDir = t.testdir()
  const space = new SimDiskSpace(dataDir)
  t.notOk(space.full())
  await setSimDiskFull(dataDir, true)
  t.ok(await exists(join(dataDir, 'sim', 'disk-full')))
  t.ok(space.full())
  t.throws(() => space.check('write', '/x'), {
    ...ENOSPC,
    syscall: 'write',
    path: '/x',
    message: "ENOSPC: no space left on device, write '/x'",
  })
  await setSimDiskFull(dataDir, false)
  await setSimDiskFull(dataDir, false)
  t.notOk(space.full(), 'removing the flag gives the space back, twice is harmless')
  t.type(noSpaceError('fdatasync', '/y'), Error)
})

t.test('atomic files find their data dir by its device; outside one nothing is ever full', async (t) => {
  const dir = t.testdir({
    data: { 'device.json': '{}', enclave: { sub: {} } },
    elsewhere: { sim: { 'disk-full': '' } },
  })
  const dataDir = join(dir, 'data')
  const elsewhere = join(dir, 'elsewhere')
  t.equal((await diskSpaceHolding(join(dataDir, 'enclave', 'sub', 'f')))?.dataDir, dataDir)
  t.equal((await diskSpaceHolding(join(dataDir, 'device.json')))?.dataDir, dataDir)
  t.equal(await diskSpaceHolding(join(elsewhere, 'f')), undefined)
  await writeFileAtomic(join(elsewhere, 'f'), 'fine', 0o600)
  t.equal(await readFile(join(elsewhere, 'f'), 'utf8'), 'fine')

  await writeFileAtomic(join(dataDir, 'enclave', 'f'), 'old', 0o600)
  await fill(t, dataDir)
  await t.rejects(writeFileAtomic(join(dataDir, 'enclave', 'f'), 'new and longer', 0o600), ENOSPC)
  t.equal(await readFile(join(dataDir, 'enclave', 'f'), 'utf8'), 'old', 'the old file stays whole')
  t.same((await readdir(join(dataDir, 'enclave'))).sort(), ['f', 'sub'], 'no temporary file is left')
  await setSimDiskFull(dataDir, false)
  await writeFileAtomic(join(dataDir, 'enclave', 'f'), 'new and longer', 0o600)
  t.equal(await readFile(join(dataDir, 'enclave', 'f'), 'utf8'), 'new and longer')
})

t.test('a journal append lands half its bytes, then fails; the cut back works on the full disk', async (t) => {
  const dataDir = t.testdir()
  const hal = await open(t, dataDir)
  const handle = await hal.journal.open('00000001')
  t.teardown(() => handle.close())
  await handle.append(Buffer.alloc(100, 'a'))
  await fill(t, dataDir)
  await t.rejects(handle.append(Buffer.alloc(200, 'b')), ENOSPC)
  t.equal(handle.size, 100, 'the handle counts only what was stored')
  t.same(
    Buffer.from(await hal.journal.read('00000001')),
    Buffer.concat([Buffer.alloc(100, 'a'), Buffer.alloc(100, 'b')]),
    'a torn append',
  )
  await handle.truncate(100)
  t.equal(await hal.journal.size('00000001'), 100, 'reads and truncation work while full')
  await setSimDiskFull(dataDir, false)
  await handle.append(Buffer.alloc(200, 'c'))
  t.same(
    Buffer.from(await hal.journal.read('00000001')),
    Buffer.concat([Buffer.alloc(100, 'a'), Buffer.alloc(200, 'c')]),
  )
})

t.test('a key slot write lands half of the record over the slot, then fails; so does an erase', async (t) => {
  const dataDir = t.testdir()
  const hal = await open(t, dataDir)
  const { keySlots } = hal
  await keySlots.write(3, Buffer.alloc(100, 0xaa))
  await fill(t, dataDir)
  await t.rejects(keySlots.write(3, Buffer.alloc(100, 0xbb)), ENOSPC)
  const torn = (await keySlots.readAll())[3]!
  t.same(
    Buffer.from(torn.subarray(0, 100)),
    Buffer.concat([Buffer.alloc(50, 0xbb), Buffer.alloc(50, 0xaa)]),
    'neither the old record nor the new',
  )
  t.ok(torn.subarray(100).every((b) => b === 0))
  await t.rejects(keySlots.erase(), ENOSPC)
  t.ok((await keySlots.readAll()).slice(4).every((slot) => slot.every((b) => b === 0)))
  await setSimDiskFull(dataDir, false)
  await keySlots.write(3, Buffer.alloc(100, 0xbb))
  t.same(Buffer.from((await keySlots.readAll())[3]!.subarray(0, 100)), Buffer.alloc(100, 0xbb))
})

t.test('enclave files: login keys and TLS material stay as they were, nothing half-written is left', async (t) => {
  const dataDir = t.testdir()
  const hal = await open(t, dataDir)
  const enclaveDir = join(dataDir, 'enclave')
  const before = (await readdir(enclaveDir)).sort()
  const credentials = { user: new Uint8Array(32).fill(1), master: new Uint8Array(32).fill(2) }
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
  const ca = await makeCa('Disk Full CA')
  const material = { certChainDer: [await issue(ca, key, 'device.example'), ca.cert], keyPkcs8: pkcs8(key) }
  await fill(t, dataDir)
  await t.rejects(hal.enclave.setCredentials(credentials), ENOSPC)
  t.equal(hal.enclave.credentials(), undefined)
  await t.rejects(hal.enclave.stageTls(material), ENOSPC)
  t.same((await readdir(enclaveDir)).sort(), before, 'no temporary file or staging directory is left')
  await setSimDiskFull(dataDir, false)
  await hal.enclave.setCredentials(credentials)
  t.same(hal.enclave.credentials(), credentials)
  await hal.enclave.stageTls(material)
  t.ok(await exists(join(enclaveDir, 'tls-staged')))
})

t.test('upgrade staging: no upload begins, a running one fails at its next write or at the end', async (t) => {
  const dataDir = t.testdir()
  const hal = await open(t, dataDir)
  const { staging } = hal
  const first = await staging.begin('fw')
  await first.write(Buffer.from('old image'))
  await first.finish()
  await fill(t, dataDir)
  await t.rejects(staging.begin('fw'), ENOSPC)
  t.equal((await staging.staged('fw'))?.size, 9, 'a refused upload leaves the image staged before it')
  await setSimDiskFull(dataDir, false)

  const writer = await staging.begin('ui')
  await writer.write(Buffer.alloc(1000, 1))
  await setSimDiskFull(dataDir, true)
  await t.rejects(writer.write(Buffer.alloc(1000, 2)), ENOSPC)
  t.equal(writer.written, 1000)
  await writer.abort()
  t.notOk(await exists(join(dataDir, 'upgrade', 'ui.part')))

  await setSimDiskFull(dataDir, false)
  const last = await staging.begin('ui')
  await last.write(Buffer.alloc(10, 3))
  await setSimDiskFull(dataDir, true)
  await t.rejects(last.finish(), { ...ENOSPC, syscall: 'fdatasync' })
  t.equal(await staging.staged('ui'), undefined, 'an upload whose fsync failed is not staged')
  await last.abort()
  t.notOk(await exists(join(dataDir, 'upgrade', 'ui.part')))
})

t.test('webroot: an install is refused before it unpacks; one that fails unpacking leaves nothing', async (t) => {
  const dataDir = t.testdir()
  const hal = await open(t, dataDir)
  const webroot = hal.webroot!
  const app = (name: string) => async (dir: string) => {
    await mkdir(dir)
    await writeFile(join(dir, 'index.html'), name)
  }
  await webroot.install(app('one'), '1'.repeat(64))
  await fill(t, dataDir)
  let unpacked = false
  await t.rejects(
    webroot.install(async (dir) => ((unpacked = true), app('two')(dir)), '2'.repeat(64)),
    ENOSPC,
  )
  t.notOk(unpacked, 'nothing is unpacked')
  t.equal(webroot.current()?.sha256, '1'.repeat(64))
  await setSimDiskFull(dataDir, false)
  await t.rejects(
    webroot.install(async (dir) => {
      await app('two')(dir)
      throw noSpaceError('write', join(dir, 'index.html'))
    }, '2'.repeat(64)),
    ENOSPC,
  )
  t.same(
    await readdir(join(dataDir, 'webroot')),
    ['1'.repeat(64), 'current.json'].sort(),
    'the half-unpacked app is gone',
  )
  await webroot.install(app('two'), '2'.repeat(64))
  t.equal(await readFile(join(webroot.current()!.dir, 'index.html'), 'utf8'), 'two')
})

t.test(
  'disks: a format is refused before it changes anything; a sector write lands whole sectors, then fails',
  async (t) => {
    const dataDir = t.testdir()
    const hal = await open(t, dataDir)
    const disks = hal.disks!
    const disk0Sectors = hal.storage.capacitySectors - SYSTEM_RESERVED_SECTORS - 4096
    await disks.format(disk0Sectors, () => undefined)
    const layout = disks.layout()
    const handle = await disks.open(0, 'rw')
    await handle.write(3000, Buffer.alloc(4 * SECTOR, 'a'))
    await fill(t, dataDir)
    await t.rejects(handle.write(3000, Buffer.alloc(4 * SECTOR, 'b')), ENOSPC)
    t.same(
      Buffer.from(await handle.read(3000, 4)),
      Buffer.concat([Buffer.alloc(2 * SECTOR, 'b'), Buffer.alloc(2 * SECTOR, 'a')]),
      'two sectors landed',
    )
    await t.rejects(handle.flush(), { ...ENOSPC, syscall: 'fdatasync' })
    await handle.close()
    const key = await stat(join(dataDir, 'disks', 'disk1.key'))
    await t.rejects(
      disks.format(disk0Sectors, () => undefined),
      ENOSPC,
    )
    t.same(disks.layout(), layout, 'still formatted')
    t.same((await stat(join(dataDir, 'disks', 'disk1.key'))).mtimeMs, key.mtimeMs, 'the Disk 1 key is the old one')
    await setSimDiskFull(dataDir, false)
    const again = await disks.open(0, 'rw')
    await again.write(3000, Buffer.alloc(4 * SECTOR, 'c'))
    await again.close()
  },
)
