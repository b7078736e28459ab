// The data disk full: every operation that must write fails closed (507, nothing
// changed, nothing half-written) and works again once the space returns; the journal cuts a
// torn append back and never writes after the remains of one.
import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { decode, encode } from '../protocol/codec.js'
import { connectBus } from '../bus/connection.js'
import { ServiceHost } from '../bus/service-host.js'
import { inboxPrefix } from '../bus/services.js'
import { Subjects } from '../protocol/subjects.js'
import type { CommandReply } from '../protocol/bus-messages.js'
import { EventstoreActor } from '../actors/eventstore/eventstore-actor.js'
import { RemoteJournal } from '../actors/eventstore/remote-journal.js'
import { Journal, JournalWriteError, verifyJournal } from '../eventstore/index.js'
import { LogType } from '../protocol/journal.js'
import { main as auditCli } from '../cli/hem-audit/audit-cli.js'
import { isStorageFull } from '../hal/errors.js'
import { setSimDiskFull } from '../hal/sim/disk-space.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import type { AppendHandle } from '../hal/types.js'
import { DelegatingJournalMedia, overrideHandle } from './helpers/delegating-media.js'
import { options, readSet, signer } from './helpers/journal-fixtures.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'
import { Tokens, api, b64, createKey } from './helpers/keys.js'
import { silentLogger } from './helpers/logger.js'
import { startNats } from './helpers/nats.js'
import { loginAnswer, owned } from './helpers/owner.js'
import { upload } from './helpers/upload.js'

const ENTRY = { type: LogType.KEY_USAGE_PKEY, result: 0 as const }

/**
 * The sim HAL's journal media on the disk of `dataDir` (a full disk tears its appends), with
 * truncates a test can make fail, and the file's size seen by each truncate before it cuts.
 */
class TornMedia extends DelegatingJournalMedia {
  failTruncate = false
  readonly sizesBeforeCut: number[] = []
  constructor(dataDir: string) {
    super(new FileJournalMedia(join(dataDir, 'journal')))
  }
  override async open(id: string): Promise<AppendHandle> {
    const handle = await this.inner.open(id)
    return overrideHandle(handle, {
      truncate: async (length) => {
        this.sizesBeforeCut.push((await this.inner.size(id))!)
        if (this.failTruncate) throw new Error('EIO truncate')
        await handle.truncate(length)
      },
    })
  }
}

/** Every file under `dir` with a hash of its bytes: what a write that should not have happened would change. */
async function digestOf(dir: string): Promise<Record<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return []
    throw err
  })
  const files = entries.filter((entry) => entry.isFile())
  const digests = await Promise.all(
    files.map(async (entry) => {
      const path = join(entry.parentPath, entry.name)
      return [
        path.slice(dir.length + 1),
        createHash('sha256')
          .update(await readFile(path))
          .digest('hex'),
      ] as const
    }),
  )
  return Object.fromEntries(digests.sort(([a], [b]) => a.localeCompare(b)))
}

async function audit(dir: string): Promise<number> {
  const quiet = { write: () => true }
  return auditCli(['verify', '--key', Buffer.from(signer.publicKey).toString('base64'), dir], {
    stdout: quiet,
    stderr: quiet,
  })
}

t.test('journal: a torn append is cut back, its callers fail, the chain does not move', async (t) => {
  const dataDir = t.testdir()
  const media = new TornMedia(dataDir)
  const journal = await Journal.open(options(media))
  t.same(await journal.append([ENTRY]), [{ file: journal.fileId, seq: 2 }])
  const size = (await media.read(journal.fileId)).length
  const head = journal.head
  await setSimDiskFull(dataDir, true)
  // Three callers in one group commit: the batch fails whole.
  const failed = await Promise.allSettled([
    journal.append([ENTRY]),
    journal.append([ENTRY, ENTRY]),
    journal.append([ENTRY]),
  ])
  for (const result of failed) {
    t.equal(result.status, 'rejected')
    const err = (result as PromiseRejectedResult).reason
    t.type(err, JournalWriteError)
    t.ok(isStorageFull(err), 'the cause is the full disk')
  }
  t.ok(
    media.sizesBeforeCut.every((torn) => torn > size),
    'each failed append had landed a part of its bytes',
  )
  t.equal((await media.read(journal.fileId)).length, size, 'cut back to the last good record')
  t.same(journal.head, head, 'the chain head did not move')
  await setSimDiskFull(dataDir, false)
  t.same(await journal.append([ENTRY]), [{ file: journal.fileId, seq: 3 }], 'the next append continues the chain')
  await journal.close()
  t.same(verifyJournal(await readSet(media), signer.publicKey).problems, [])
  t.equal(await audit(join(dataDir, 'journal')), 0, 'hem-audit verify')
})

t.test('journal: a torn append that cannot be cut back stops every append until the cut works', async (t) => {
  const dataDir = t.testdir()
  const media = new TornMedia(dataDir)
  const warnings: string[] = []
  const logger = { warn: (_: object, msg: string) => void warnings.push(msg), info: () => undefined }
  const journal = await Journal.open(options(media, { logger }))
  const file = journal.fileId
  await journal.append([ENTRY])
  const size = (await media.read(file)).length
  media.failTruncate = true
  await setSimDiskFull(dataDir, true)
  await t.rejects(journal.append([ENTRY]), JournalWriteError)
  const torn = (await media.read(file)).length
  t.ok(torn > size, 'the remains of the failed append are still there')
  await setSimDiskFull(dataDir, false)
  await t.rejects(
    journal.append([ENTRY]),
    { name: 'JournalWriteError', cause: { message: 'EIO truncate' } },
    'space alone does not help: the remains must go first',
  )
  t.equal((await media.read(file)).length, torn, 'nothing was written after them')
  t.same(warnings, Array(2).fill('journal: write failed and could not be cut back; appends are refused until it can'))
  media.failTruncate = false
  t.same(await journal.append([ENTRY]), [{ file, seq: 3 }], 'repaired: the same file, the chain continued')
  await journal.close()
  t.same(verifyJournal(await readSet(media), signer.publicKey).problems, [])
  t.equal(await audit(join(dataDir, 'journal')), 0, 'hem-audit verify')
})

t.test('journal: closing a journal left broken cuts the remains before its close seal', async (t) => {
  const dataDir = t.testdir()
  const media = new TornMedia(dataDir)
  const journal = await Journal.open(options(media))
  await journal.append([ENTRY])
  media.failTruncate = true
  await setSimDiskFull(dataDir, true)
  await t.rejects(journal.append([ENTRY]), JournalWriteError)
  await setSimDiskFull(dataDir, false)
  media.failTruncate = false
  await journal.close()
  t.same(
    verifyJournal(await readSet(media), signer.publicKey).problems,
    [],
    'sealed, without an open tail or a stray line',
  )
})

t.test(
  'split: the eventstore answers a full disk with 507, and a service journaling through the bus answers 507 too',
  async (t) => {
    const dir = t.testdir()
    const devid = '00112233aabbccdd'
    const nats = await startNats(dir)
    t.teardown(() => nats.stop())
    const dataDir = join(dir, 'data')
    const journal = await Journal.open(options(new TornMedia(dataDir)))
    t.teardown(() => journal.close())
    const connect = async (service: string) => {
      const nc = await connectBus({ servers: nats.url, service })
      t.teardown(() => nc.close())
      return nc
    }
    const eventstore = new EventstoreActor(await connect('eventstore'), devid, journal, silentLogger)
    await eventstore.start()
    t.teardown(() => eventstore.stop())
    const nc = await connect('keystore')
    const remote = new RemoteJournal(nc, devid, inboxPrefix('keystore'))
    const host = new ServiceHost(
      nc,
      devid,
      'keystore',
      { act: { handler: async () => ({ status: 200, body: await remote.append([ENTRY]) }) } },
      silentLogger,
    )
    host.start()
    t.teardown(() => host.stop())
    const act = async () =>
      decode<CommandReply>(
        (await nc.request(new Subjects(devid).command('keystore', 'act'), encode({ rid: 'r', tls: false }))).data,
      )

    t.same(await remote.append([ENTRY]), [{ file: journal.fileId, seq: 2 }])
    await setSimDiskFull(dataDir, true)
    const err: unknown = await remote.append([ENTRY]).catch((e: unknown) => e)
    t.type(err, JournalWriteError)
    t.ok(isStorageFull(err), 'the full disk survives the trip across the bus')
    t.match(await act(), { status: 507, body: { error: 'no_space' } })
    await setSimDiskFull(dataDir, false)
    t.match(await act(), { status: 200, body: [{ seq: 3 }] })
  },
)

t.test(
  'a device with a full data disk answers 507 to every write, changes nothing, and works again when space returns',
  async (t) => {
    const o = await owned(t)
    const { dataDir } = o.device
    const tokens = new Tokens(o.base)
    const kid = await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'before', type: 'AES256' })
    const scopes = ['keymgmt:gen', 'keymgmt:list', 'keymgmt:upd', 'keymgmt:del', `keymgmt:use:${kid}`]
    const [gen, list, upd, del, use] = await Promise.all(scopes.map((scope) => tokens.get(scope)))
    const image = new Uint8Array(Buffer.from('not even an image: staging takes any bytes'))

    const writes = {
      'key create': () => api(`${o.https}/api/keymgmt/create`, gen, { label: 'during', type: 'AES256' }),
      'key update': () => api(`${o.https}/api/keymgmt/update`, upd, { kid, label: 'renamed' }),
      encrypt: () =>
        api(`${o.https}/api/crypto/cipher/encrypt`, use, { alg: 'AES256-GCM', kid, msg: b64(Buffer.from('hello')) }),
      'config update': () => api(`${o.base}/api/system/config`, o.token, { email: 'grace@example.com' }),
      login: () => loginAnswer(o.base, 'keymgmt:list'),
      upload: () => upload(o.base, 'fw', image, {}, o.token),
      'key delete': () => api(`${o.https}/api/keymgmt/delete/${kid}`, del, undefined, 'DELETE'),
    }

    const observed = async () => {
      const status = (await api(`${o.base}/api/system/status`, list)).json
      const config = (await api(`${o.base}/api/system/config`, o.token)).json
      const { records } = await readJournal(dataDir)
      return {
        keys: (await api(`${o.https}/api/keymgmt/list`, list)).json,
        config: { ...config, nonce: undefined },
        fls: status.fls_state,
        repo: status.repo_stats,
        records: records.length,
        journal: await digestOf(join(dataDir, 'journal')),
        slots: await digestOf(join(dataDir, 'keys')),
        staging: await digestOf(join(dataDir, 'upgrade')),
        enclave: await digestOf(join(dataDir, 'enclave')),
      }
    }
    t.equal((await writes.upload()).status, 200, 'an image staged before the disk fills')
    const before = await observed()

    await setSimDiskFull(dataDir, true)
    t.teardown(() => setSimDiskFull(dataDir, false))
    for (const [name, write] of Object.entries(writes)) {
      const answer = await write()
      t.equal(answer.status, 507, `${name}: 507 Insufficient Storage`)
      t.equal(answer.json.error, 'no_space', `${name}: a JSON error that names the cause`)
    }
    t.same(
      await observed(),
      before,
      'keys, config and status as before; no byte of the journal, key slots, staging or enclave changed',
    )
    t.ok((await verifyDataDir(dataDir, o.device.logPublicKey, true)).ok, 'the journal verifies while the disk is full')

    await setSimDiskFull(dataDir, false)
    for (const [name, write] of Object.entries(writes))
      t.equal((await write()).status, 200, `${name} works once the space is back`)
    const { records } = await readJournal(dataDir)
    const after = (type: number) => records.slice(before.records).filter((r) => r.type === type).length
    t.same(
      [
        LogType.KEY_GENERATION,
        LogType.KEY_ATTRIBUTES_CHANGED,
        LogType.CRYPTO_ENCRYPT,
        LogType.CONFIG_UPDATED,
        LogType.AUTH_SUCCESS_INTERNAL,
        LogType.KEY_DELETE,
      ].map(after),
      [1, 1, 1, 1, 1, 1],
      'each operation is journaled once: the ones that failed left no record',
    )
    const keys = (await api(`${o.https}/api/keymgmt/list`, list)).json
    t.same(
      keys.list.map((key: { label: string }) => key.label),
      ['during'],
      'the key made after the space returned, the old one deleted',
    )
    t.equal((await api(`${o.base}/api/system/config`, o.token)).json.email, 'grace@example.com')
    t.ok((await verifyDataDir(dataDir, o.device.logPublicKey, true)).ok, 'the journal verifies')

    // The slots torn by the failed create and update were mended by the changes after them.
    await o.device.restart()
    t.equal(
      (await api(`${o.base}/api/system/status`, undefined)).json.fls_state,
      0,
      'no integrity fault after a reboot',
    )
    t.equal((await readJournal(dataDir)).records.filter((r) => r.type === LogType.KEY_INTEGRITY_ERROR).length, 0)
    await o.device.stop()
    t.same(
      (await verifyDataDir(dataDir, o.device.logPublicKey)).problems,
      [],
      'the journal verifies, every file sealed',
    )
    const quiet = { write: () => true }
    t.equal(
      await auditCli(
        ['verify', '--key', Buffer.from(o.device.logPublicKey).toString('base64'), join(dataDir, 'journal')],
        { stdout: quiet, stderr: quiet },
      ),
      0,
      'hem-audit verify',
    )
  },
)
