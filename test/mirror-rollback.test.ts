// A device whose whole data dir was rolled back (restored from an earlier copy) cannot see it
// from inside: its files and anchor agree. The fleet mirror can: the stream holds records the
// device signed past the journal's end. The mirror says `rollback`, publishes nothing more,
// fls_state gets 0x08 and the journal a NON_SECURE_STATE record (source `mirror`). An auditor's
// signed head saved before the rollback shows it offline too (`hem-audit verify --head`).

import { cp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import type { StreamApi } from '../bus/stream-api.js'
import { journalStream } from '../bus/stream-names.js'
import { main as auditCli } from '../cli/hem-audit/audit-cli.js'
import { FLS } from '../protocol/index.js'
import { LogType } from '../protocol/journal.js'
import type { MirrorStatus } from '../protocol/mirror-status.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { backendUnderTest, DOMAIN } from './helpers/jetstream-backend.js'
import { readJournal } from './helpers/journal.js'
import { bearer, login, owned } from './helpers/owner.js'
import { until } from './helpers/until.js'
import { configChanges } from './helpers/config-changes.js'

const status = async (base: string) => (await call(`${base}/api/system/status`)).json

/** The stream holds every durable record of the device's journal but the last file's close seal, not sent yet. */
async function mirrored(api: StreamApi, stream: string, dataDir: string): Promise<boolean> {
  const info = await api.info(stream)
  return info !== undefined && info.messages >= (await readJournal(dataDir)).records.length
}

async function audit(argv: string[]): Promise<{ code: number; out: string }> {
  let out = ''
  const write = (text: string) => void (out += text)
  const code = await auditCli(argv, { stdout: { write }, stderr: { write }, env: {} })
  return { code, out }
}

t.test('a data dir rolled back behind its stream: the mirror says rollback, fls_state 0x08', async (t) => {
  const dir = t.testdir()
  const { leafPort, api } = await backendUnderTest(t, dir)
  const dataDir = join(dir, 'device')
  const backend = { url: `nats://127.0.0.1:${leafPort}`, domain: DOMAIN }
  const first = await owned(t, { dataDir, cfg: { trusted_backend: true }, boot: { backend } })
  const stream = journalStream(first.device.devid)
  const logKey = Buffer.from(first.device.logPublicKey).toString('base64')
  await configChanges(t, first.base, await login(first.base, 'system:config'), 2)
  await first.device.stop()
  const copy = join(dir, 'copy')
  await cp(dataDir, copy, { recursive: true })

  // The device goes on: more records, mirrored; an auditor keeps the signed head it was given.
  const second = await bootDevice(t, { dataDir, variant: 'E', backend })
  await configChanges(t, second.httpUrl!, await login(second.httpUrl!, 'system:config'), 3)
  const key = await call(`${second.httpUrl!}/api/logger/key`, {
    headers: bearer(await login(second.httpUrl!, 'logger:get')),
  })
  const savedHead = join(dir, 'saved-head.json')
  await writeFile(savedHead, JSON.stringify(key.json.head))
  await until('the stream holds the journal', () => mirrored(api, stream, dataDir), { ms: 60_000 })
  await second.stop()

  // Someone puts the earlier copy back: the files and the enclave's anchor agree with each other.
  await rm(dataDir, { recursive: true })
  await cp(copy, dataDir, { recursive: true })
  const rolledBack = await bootDevice(t, { dataDir, variant: 'E', backend })
  const base = rolledBack.httpUrl!
  await until('the mirror finds the rollback', async () => (await status(base)).mirror?.state === 'rollback', {
    ms: 30_000,
  })
  const mirror = (await status(base)).mirror as MirrorStatus
  t.equal(mirror.stream, stream)
  t.match(mirror.detail, /signed by this device, holds record \S+, which the journal no longer has/)
  await until('fls_state has 0x08', async () => ((await status(base)).fls_state & FLS.INTEGRITY) !== 0, {
    ms: 10_000,
  })
  const lastSeq = (await api.info(stream))!.lastSeq
  await configChanges(t, base, await login(base, 'system:config'), 1)
  await rolledBack.stop()
  t.equal((await api.info(stream))!.lastSeq, lastSeq, 'nothing more was published to the stream')
  const { records } = await readJournal(dataDir)
  t.match(
    records.filter((r) => r.type === LogType.NON_SECURE_STATE),
    [{ result: 2, decoded: { raised: FLS.INTEGRITY, source: 'mirror', detail: { stream } } }],
    'journaled once, from the mirror',
  )

  // Offline: the files verify alone, but not against the head the auditor saved before the rollback.
  const files = join(dataDir, 'journal')
  t.equal((await audit(['verify', '--key', logKey, files])).code, 6, 'the files alone verify, with the rollback told')
  const saved = await audit(['verify', '--key', logKey, '--head', savedHead, files])
  t.equal(saved.code, 1, `the saved head does not: ${saved.out}`)
  // Which of the two it tells depends on whether the rolled-back boot opened its file in the same second
  // as the lost one (file ids are opening times): either way it names the rollback.
  t.match(saved.out, /the journal went back to an older state \(its data rolled back\)/)
})
