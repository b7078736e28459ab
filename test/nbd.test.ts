// Unlocked disks exported over NBD: libnbd's own clients against the device, and the
// protocol's edges with a client that can misbehave.
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import {
  ClientFlag,
  Command,
  Errno,
  Info,
  MAX_PAYLOAD,
  Option,
  OptionReply,
  TransmissionFlag,
} from '../actors/storage/nbd-protocol.js'
import { bootDevice } from './helpers/device.js'
import { api } from './helpers/keys.js'
import { NbdTestClient } from './helpers/nbd-client.js'
import { login, owned, type Owned } from './helpers/owner.js'
import { until } from './helpers/until.js'

const run = promisify(execFile)
const SECTOR = 512
const LOOPBACK = { host: '127.0.0.1', port: 0 }

interface NbdinfoExport {
  'export-name': string
  'export-size': number
  is_read_only: boolean
}

async function nbdinfo(uri: string, list = false): Promise<NbdinfoExport[]> {
  const { stdout } = await run('nbdinfo', ['--json', ...(list ? ['--list'] : []), uri])
  return (JSON.parse(stdout) as { exports: NbdinfoExport[] }).exports
}

async function storageCall(o: Owned, op: string, scope: string): Promise<number> {
  return (await api(`${o.base}/api/storage/${op}`, await login(o.base, scope))).status
}

async function modes(o: Owned): Promise<string[]> {
  const storage = (await api(`${o.base}/api/system/status`, undefined)).json.storage as string[]
  return storage.map((s) => s.split(':')[1]!)
}

/** Reads `length` bytes in pieces the way a block layer would. */
async function readAll(client: NbdTestClient, offset: number, length: number): Promise<Buffer> {
  const pieces: Buffer[] = []
  for (let at = offset; at < offset + length; at += 1024 * 1024) {
    const answer = await client.read(at, Math.min(1024 * 1024, offset + length - at))
    if (answer.errno !== 0) throw new Error(`read errno ${answer.errno}`)
    pieces.push(answer.data!)
  }
  return Buffer.concat(pieces)
}

const haveLibnbd = await run('nbdinfo', ['--version']).then(
  () => true,
  () => false,
)

t.test(
  'P: libnbd clients list, read and write the unlocked disks; lock withdraws; reboot keeps the address',
  { skip: !haveLibnbd && 'nbdinfo (libnbd-bin) is not installed' },
  async (t) => {
    const o = await owned(t, { variant: 'P', boot: { nbd: LOOPBACK } })
    const address = o.device.nbdAddress!
    t.match(address, /^127\.0\.0\.1:\d+$/)
    await until('Disk 0 up', async () => (await modes(o))[0] === 'ro')
    const sectors = ((await api(`${o.base}/api/system/status`, undefined)).json.storage as string[]).map((s) =>
      Number(s.split(':')[0]),
    )

    let exports = await nbdinfo(`nbd://${address}`, true)
    t.same(
      exports.map((e) => [e['export-name'], e['export-size'], e.is_read_only]),
      [['disk0', sectors[0]! * SECTOR, true]],
      'at power-up only Disk 0 is exported, read-only as storage_mode says',
    )

    t.equal(await storageCall(o, 'unlock/rw', 'storage:disk1:rw'), 200)
    exports = await nbdinfo(`nbd://${address}`, true)
    t.same(
      exports.map((e) => [e['export-name'], e.is_read_only]).sort(),
      [
        ['disk0', true],
        ['disk1', false],
      ],
      'Disk 1 joins, writable',
    )

    // Not t.testdir(): a second call in one test would empty the device's data dir.
    const dir = await mkdtemp(join(tmpdir(), 'hemd-nbd-'))
    t.teardown(() => rm(dir, { recursive: true, force: true }))
    const plain = randomBytes(3 * 1024 * 1024 + 1000)
    await writeFile(join(dir, 'plain.bin'), plain)
    await run('nbdcopy', [join(dir, 'plain.bin'), `nbd://${address}/disk1`])
    const reader = await NbdTestClient.connect(address)
    t.notOk('error' in (await reader.go('disk1')))
    t.ok(
      (await readAll(reader, 0, plain.length)).equals(plain),
      'what nbdcopy wrote (a partial last sector included) reads back',
    )
    t.ok((await readAll(reader, 12_345, 100_000)).equals(plain.subarray(12_345, 112_345)), 'an unaligned range too')

    const image = await open(join(o.device.dataDir, 'disks', 'disk1.img'), 'r')
    const stored = Buffer.alloc(plain.length)
    await image.read(stored, 0, stored.length, 0)
    await image.close()
    const leaked = Array.from({ length: Math.floor(plain.length / SECTOR) }, (_, i) => i).filter((i) =>
      stored.subarray(i * SECTOR, (i + 1) * SECTOR).equals(plain.subarray(i * SECTOR, (i + 1) * SECTOR)),
    )
    t.same(leaked, [], 'no sector of Disk 1 rests in the clear')

    t.equal(await storageCall(o, 'unlock/ro', 'storage:disk1:rw'), 200)
    t.ok(await reader.endsWithin(2000), 'the connection to the writable disk ends when it becomes read-only')
    await t.rejects(
      run('nbdcopy', [join(dir, 'plain.bin'), `nbd://${address}/disk1`]),
      'nbdcopy cannot write a read-only disk',
    )
    const readOnly = await NbdTestClient.connect(address)
    const info = await readOnly.go('disk1')
    t.ok('flags' in info && info.flags & TransmissionFlag.READ_ONLY, 'flagged read-only')
    t.equal(await readOnly.write(0, Buffer.alloc(SECTOR)), Errno.EPERM, 'a write is refused with EPERM')
    t.ok((await readAll(readOnly, 0, 4096)).equals(plain.subarray(0, 4096)), 'and reads still work')

    t.equal(await storageCall(o, 'lock', 'storage:disk1'), 200)
    t.ok(await readOnly.endsWithin(2000), 'locking drops the connection')
    await t.rejects(nbdinfo(`nbd://${address}/disk1`), 'a locked disk is no export')
    const late = await NbdTestClient.connect(address)
    const refused = await late.go('disk1')
    t.equal('error' in refused && refused.error, OptionReply.ERR_UNKNOWN)
    t.match('message' in refused && refused.message, /unlocked/)
    late.close()

    await o.device.restart()
    t.equal(o.device.nbdAddress, address, 'a reboot keeps the address')
    await until('Disk 0 up again', async () => (await modes(o))[0] === 'ro', { rethrow: false })
    exports = await nbdinfo(`nbd://${address}`, true)
    t.same(
      exports.map((e) => e['export-name']),
      ['disk0'],
      'after the reboot: Disk 0 by storage_mode, Disk 1 locked',
    )
  },
)

t.test('the protocol edges, on a writable Disk 0', async (t) => {
  const o = await owned(t, { variant: 'P', boot: { nbd: LOOPBACK } })
  const address = o.device.nbdAddress!
  await until('Disk 0 up', async () => (await modes(o))[0] === 'ro')
  t.equal(await storageCall(o, 'unlock/rw', 'storage:disk0:rw'), 200)

  t.test('negotiation', async (t) => {
    const client = await NbdTestClient.connect(address)
    t.teardown(() => client.close())
    const listed = await client.option(Option.LIST)
    t.same(
      listed.map((a) => a.type),
      [OptionReply.SERVER, OptionReply.ACK],
    )
    t.equal(listed[0]!.data.subarray(4).toString(), 'disk0')
    t.equal((await client.option(Option.LIST, Buffer.from('x')))[0]!.type, OptionReply.ERR_INVALID, 'LIST with data')
    t.equal((await client.option(Option.STARTTLS))[0]!.type, OptionReply.ERR_POLICY)
    t.equal((await client.option(Option.STRUCTURED_REPLY))[0]!.type, OptionReply.ERR_UNSUP, 'simple replies only')
    t.equal((await client.option(99))[0]!.type, OptionReply.ERR_UNSUP)
    t.equal(
      (await client.option(Option.INFO, Buffer.from([0, 0, 0, 9, 1])))[0]!.type,
      OptionReply.ERR_INVALID,
      'a malformed INFO',
    )
    t.equal(
      (await client.option(Option.INFO, Buffer.alloc(4097)))[0]!.type,
      OptionReply.ERR_TOO_BIG,
      'option data over 4 KiB',
    )
    const info = await client.go('disk0', [Info.BLOCK_SIZE])
    t.same(info, {
      size:
        Number(((await api(`${o.base}/api/system/status`, undefined)).json.storage as string[])[0]!.split(':')[0]) *
        SECTOR,
      flags: TransmissionFlag.HAS_FLAGS | TransmissionFlag.SEND_FLUSH,
      blockSizes: [1, 4096, MAX_PAYLOAD],
    })
    t.equal(
      await client.command(Command.DISC).catch(() => 'ended'),
      'ended',
      'DISC ends the connection without a reply',
    )
  })

  t.test('handshakes that end the connection', async (t) => {
    for (const flags of [0, ClientFlag.FIXED_NEWSTYLE | 0x80]) {
      const client = await NbdTestClient.connect(address, flags)
      t.ok(await client.endsWithin(2000), `client flags ${flags}`)
    }
    const unknown = await NbdTestClient.connect(address)
    unknown.sendOption(Option.EXPORT_NAME, Buffer.from('disk7'))
    t.ok(await unknown.endsWithin(2000), 'EXPORT_NAME of no export')
    const abort = await NbdTestClient.connect(address)
    t.same(
      (await abort.option(Option.ABORT)).map((a) => a.type),
      [OptionReply.ACK],
    )
    t.ok(await abort.endsWithin(2000), 'ABORT')
  })

  t.test('EXPORT_NAME, with and without the 124 zeroes', async (t) => {
    for (const [flags, length] of [
      [ClientFlag.FIXED_NEWSTYLE | ClientFlag.NO_ZEROES, 10],
      [ClientFlag.FIXED_NEWSTYLE, 134],
    ] as const) {
      const client = await NbdTestClient.connect(address, flags)
      t.teardown(() => client.close())
      client.sendOption(Option.EXPORT_NAME, Buffer.from('disk0'))
      const answer = await (client as unknown as { reader: { read(n: number): Promise<Buffer> } }).reader.read(length)
      t.equal(answer.readUInt16BE(8), TransmissionFlag.HAS_FLAGS | TransmissionFlag.SEND_FLUSH)
      t.ok((await client.read(0, SECTOR)).data?.length === SECTOR, 'then transmission')
    }
  })

  t.test('transmission', async (t) => {
    const client = await NbdTestClient.connect(address)
    t.teardown(() => client.close())
    const info = await client.go('disk0')
    const size = 'size' in info ? info.size : 0
    const before = await readAll(client, 0, 8192)
    const patch = randomBytes(700)
    t.equal(await client.write(1000, patch), 0, 'an unaligned write')
    const expected = Buffer.from(before)
    patch.copy(expected, 1000)
    t.ok((await readAll(client, 0, 8192)).equals(expected), 'patches just its bytes')

    const big = randomBytes(4 * 1024 * 1024 + 3)
    t.equal(await client.write(511, big), 0, 'a write over several HAL pieces, unaligned at both ends')
    t.ok((await readAll(client, 511, big.length)).equals(big))
    t.equal(await client.command(Command.FLUSH), 0, 'FLUSH')

    t.equal((await client.read(size - SECTOR, SECTOR + 1)).errno, Errno.EINVAL, 'a read past the end')
    t.equal(await client.write(size - 1, Buffer.alloc(2)), Errno.ENOSPC, 'a write past the end')
    t.equal((await client.read(0, MAX_PAYLOAD + 1)).errno, Errno.EINVAL, 'a read over 32 MiB')
    t.equal((await client.read(0, 0)).errno, 0, 'an empty read')
    t.equal(await client.command(9), Errno.EINVAL, 'an unknown command')
    t.ok(
      (await readAll(client, size - SECTOR, SECTOR)).length === SECTOR,
      'the connection is still in step after every refusal',
    )
  })

  t.test('a client that does not read holds the sender back, and may leave while held', async (t) => {
    const slow = await NbdTestClient.connect(address)
    await slow.go('disk0')
    const cookie = slow.sendRequest(Command.READ, 0, MAX_PAYLOAD)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const answer = await slow.reply(cookie, MAX_PAYLOAD)
    t.equal(answer.data?.length, MAX_PAYLOAD, '32 MiB arrive once read')
    slow.sendRequest(Command.READ, 0, MAX_PAYLOAD)
    await new Promise((resolve) => setTimeout(resolve, 300))
    slow.close()
    const next = await NbdTestClient.connect(address)
    t.teardown(() => next.close())
    await next.go('disk0')
    t.equal((await next.read(0, SECTOR)).errno, 0, 'the export serves on')
  })

  t.test('a bad request magic ends the connection', async (t) => {
    const client = await NbdTestClient.connect(address)
    await client.go('disk0')
    ;(client as unknown as { socket: { write(b: Buffer): void } }).socket.write(Buffer.alloc(28))
    t.ok(await client.endsWithin(2000))
  })
})

t.test(
  'a Unix socket: owner-only, and a stale one from a dead device is replaced',
  { skip: !haveLibnbd && 'nbdinfo (libnbd-bin) is not installed' },
  async (t) => {
    // sockaddr_un holds 108 bytes: tap's fixture paths are too long for it.
    const dir = await mkdtemp(join(tmpdir(), 'hemd-nbd-'))
    t.teardown(() => rm(dir, { recursive: true, force: true }))
    const path = join(dir, 'nbd.sock')
    const dead = spawn(process.execPath, [
      '-e',
      `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ])
    await once(dead, 'exit')
    t.ok((await stat(path)).isSocket(), 'a stale socket is left behind')

    const o = await owned(t, { variant: 'P', boot: { nbd: { path } } })
    t.equal(o.device.nbdAddress, path)
    t.equal((await stat(path)).mode & 0o777, 0o600)
    await until('Disk 0 up', async () => (await modes(o))[0] === 'ro')
    const [disk0] = await nbdinfo(`nbd+unix:///disk0?socket=${path}`)
    t.equal(disk0?.is_read_only, true)
  },
)

t.test('E has no disks and so no export', async (t) => {
  const device = await bootDevice(t, { variant: 'E', dataDir: t.testdir(), nbd: LOOPBACK })
  t.equal(device.nbdAddress, undefined)
})

t.test(
  '--split: the storage process serves the export',
  { skip: !haveLibnbd && 'nbdinfo (libnbd-bin) is not installed' },
  async (t) => {
    const o = await owned(t, { variant: 'P', boot: { nbd: LOOPBACK, split: true } })
    await until('Disk 0 up', async () => (await modes(o))[0] === 'ro')
    const exports = await nbdinfo(`nbd://${o.device.nbdAddress}`, true)
    t.same(
      exports.map((e) => e['export-name']),
      ['disk0'],
    )
  },
)
