// The journal's head anchor cannot be removed or swapped unseen (issue 35, item 3): each tamper
// with the enclave's anchor on a stopped device makes the next boot raise fls_state 0x08 and
// journal NON_SECURE_STATE (source `journal`), while the files alone still verify.
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { chainStart, chainStep, readLines } from '../eventstore/index.js'
import { readPrivateKey } from '../hal/sim/enclave-files.js'
import { JournalAnchorFile } from '../hal/sim/journal-anchor-file.js'
import { FLS } from '../protocol/index.js'
import { LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'

const anchorPath = (dataDir: string): string => join(dataDir, 'enclave', 'journal-anchor.json')
const newestFile = async (dataDir: string): Promise<string> => {
  const { files } = await readJournal(dataDir)
  return join(dataDir, 'journal', `${files.at(-1)!.id}.log`)
}

async function tamperRecords(dataDir: string) {
  const { records } = await readJournal(dataDir)
  return records.filter((r) => r.type === LogType.NON_SECURE_STATE && r.decoded?.source === 'journal')
}

/** Boots and stops a device `times` times: each boot leaves a file ended by its close seal, anchored. */
async function bootTimes(t: Test, dataDir: string, times: number, identity: 'shared' | 'fresh' = 'shared') {
  for (let i = 0; i < times; i++) await (await bootDevice(t, { dataDir, variant: 'E', identity })).stop()
}

/** The next boot raises 0x08 and journals it once; the files still verify; the boot after is secure again. */
async function tamperFound(t: Test, dataDir: string, what: string): Promise<void> {
  const device = await bootDevice(t, { dataDir, variant: 'E' })
  const fls = (await call(`${device.httpUrl!}/api/system/status`)).json.fls_state as number
  t.equal(fls & FLS.INTEGRITY, FLS.INTEGRITY, `${what}: fls_state has 0x08`)
  const logKey = device.logPublicKey
  await device.stop()
  t.match(await tamperRecords(dataDir), [{ result: 2, decoded: { raised: FLS.INTEGRITY, source: 'journal' } }])
  t.same((await verifyDataDir(dataDir, logKey)).problems, [], `${what}: the files alone verify`)
  const next = await bootDevice(t, { dataDir, variant: 'E' })
  t.equal((await call(`${next.httpUrl!}/api/system/status`)).json.fls_state, 0, `${what}: the next boot is secure`)
  await next.stop()
  t.equal((await tamperRecords(dataDir)).length, 1, `${what}: the tamper record stays`)
}

t.test('the anchor deleted: the journal holds seals, the enclave no anchor', async (t) => {
  const dataDir = t.testdir()
  await bootTimes(t, dataDir, 2)
  await rm(anchorPath(dataDir))
  await tamperFound(t, dataDir, 'the anchor deleted')
})

t.test('the anchor and the newest file deleted together', async (t) => {
  const dataDir = t.testdir()
  await bootTimes(t, dataDir, 2)
  await rm(await newestFile(dataDir))
  await rm(anchorPath(dataDir))
  await tamperFound(t, dataDir, 'the anchor and the newest file deleted')
})

t.test('an older anchor put back, the files left whole', async (t) => {
  const dataDir = t.testdir()
  await bootTimes(t, dataDir, 1)
  const saved = join(dataDir, 'saved-anchor.json')
  await copyFile(anchorPath(dataDir), saved)
  await bootTimes(t, dataDir, 1)
  await copyFile(saved, anchorPath(dataDir))
  await tamperFound(t, dataDir, 'an older anchor put back')
})

t.test("another device's anchor, naming this journal's end", async (t) => {
  const root = t.testdir({ a: {}, b: {} })
  const [a, b] = [join(root, 'a'), join(root, 'b')]
  await bootTimes(t, a, 1)
  await bootTimes(t, b, 1, 'fresh')
  const own = JSON.parse(await readFile(anchorPath(a), 'utf8')) as { file: string; seq: number; head: string }
  const other = JSON.parse(await readFile(join(b, 'device.json'), 'utf8')) as { devid: string }
  const otherKey = await readPrivateKey(join(b, 'enclave', 'log-signing.key.pem'), 'ed25519')
  await new JournalAnchorFile(anchorPath(a), other.devid, otherKey).write({
    file: own.file,
    seq: own.seq,
    head: new Uint8Array(Buffer.from(own.head, 'base64')),
  })
  await tamperFound(t, a, "another device's anchor")
})

t.test("an edited anchor: the newest file's end cut and the anchor moved to the new end", async (t) => {
  const dataDir = t.testdir()
  await bootTimes(t, dataDir, 2)
  const path = await newestFile(dataDir)
  const id = path.slice(-12, -4)
  const lines = (await readFile(path, 'utf8')).split('\n').slice(0, -1)
  const kept = `${lines.slice(0, -2).join('\n')}\n`
  await writeFile(path, kept)
  let head = chainStart(id)
  let seq = -1
  for (const line of readLines(Buffer.from(kept))) {
    head = chainStep(head, line.bytes)
    if (line.kind === 'record') seq = line.record.seq
  }
  const anchor = JSON.parse(await readFile(anchorPath(dataDir), 'utf8')) as Record<string, unknown>
  await writeFile(anchorPath(dataDir), JSON.stringify({ ...anchor, seq, head: Buffer.from(head).toString('base64') }))
  await tamperFound(t, dataDir, 'an edited anchor')
})
