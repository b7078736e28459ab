// A stream that no longer continues the journal: one foreign message in it. The device says so as an
// error (status, hemctl), publishes nothing more to it, and the operator carries on with the stream's
// next generation, which gets every record still on the device. Every batch the mirror publishes ends
// with the log key's signed head over it.

import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { StreamApi } from '../bus/stream-api.js'
import { main as auditCli } from '../cli/hem-audit/audit-cli.js'
import {
  FILE_HEADER,
  headerPosition,
  journalStream,
  journalStreamId,
  journalSubject,
  SEQ_HEADER,
} from '../bus/stream-names.js'
import type { MirrorStatus } from '../protocol/mirror-status.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { hemctlInProcess } from './helpers/hemctl-in-process.js'
import { backendUnderTest, DOMAIN } from './helpers/jetstream-backend.js'
import { readJournal } from './helpers/journal.js'
import { login, owned } from './helpers/owner.js'
import { streamHeads } from './helpers/stream-heads.js'
import { until } from './helpers/until.js'
import { configChanges } from './helpers/config-changes.js'

async function mirrorStatus(base: string): Promise<MirrorStatus | undefined> {
  return (await call(`${base}/api/system/status`)).json.mirror as MirrorStatus | undefined
}

/** Status learns of the last acknowledgement a moment after the stream holds the record. */
async function caughtUp(t: Test, base: string, stream: string, message: string): Promise<void> {
  const want = { state: 'mirroring', stream, lag: { records: 0 } }
  await until(message, async () => JSON.stringify(await mirrorStatus(base)) === JSON.stringify(want))
  t.same(await mirrorStatus(base), want, message)
}

/** The stream's messages, concatenated per journal file. */
async function streamFiles(api: StreamApi, stream: string): Promise<Map<string, Buffer>> {
  const info = (await api.info(stream))!
  const files = new Map<string, Buffer>()
  for await (const message of api.messages(stream, info.firstSeq, info.lastSeq)) {
    const at = headerPosition(message.headers?.get(FILE_HEADER), message.headers?.get(SEQ_HEADER))!
    files.set(at.file, Buffer.concat([files.get(at.file) ?? Buffer.alloc(0), message.data]))
  }
  return files
}

/** The stream holds the device's journal, every record once and byte for byte. */
async function holdsJournal(api: StreamApi, stream: string, dataDir: string): Promise<boolean> {
  const journal = await readJournal(dataDir)
  const info = await api.info(stream)
  if (!info || info.messages !== journal.records.length) return false
  const files = await streamFiles(api, stream)
  return journal.files.every((file) => files.get(file.id)?.equals(file.bytes) === true)
}

t.test('a foreign message: the mismatch is shown, and the next generation mirrors every record', async (t) => {
  const dir = t.testdir()
  const { backend, leafPort, hub, api } = await backendUnderTest(t, dir)
  const dataDir = join(dir, 'device')
  const url = `nats://127.0.0.1:${leafPort}`
  const a = await owned(t, { dataDir, cfg: { trusted_backend: true }, boot: { backend: { url, domain: DOMAIN } } })
  const devid = a.device.devid
  const first = journalStream(devid)
  const logKey = a.device.logPublicKey

  await configChanges(t, a.base, a.token, 3)
  await until('the journal is mirrored', () => holdsJournal(api, first, dataDir), { ms: 60_000 })
  await caughtUp(t, a.base, first, 'status shows the mirror at work, nothing behind')
  const heads = await streamHeads(api, first, logKey)
  t.ok(heads.signed.length > 0, `batches carry a signed head (${heads.signed.length} of ${heads.messages})`)
  t.same(heads.bad, [], 'each verifies with the log key over the chain head the stream holds')
  t.ok(heads.lastSigned, "the stream's last message carries one: every mirrored record is covered")

  // Whoever holds the backend's admin rights writes into the device's stream.
  await hub.request(journalSubject(devid), new TextEncoder().encode('# not a record of the device\n'))
  const foreign = (await api.info(first))!.lastSeq
  await configChanges(t, a.base, a.token, 2)
  await until('the device shows the mismatch', async () => (await mirrorStatus(a.base))?.state === 'mismatch', {
    ms: 30_000,
  })
  const shown = (await mirrorStatus(a.base))!
  t.equal(shown.stream, first, 'naming the stream')
  t.match(shown.detail, `message ${foreign} of ${first} names no journal record`, 'and the message that does not fit')
  t.equal((await api.info(first))!.lastSeq, foreign, 'nothing more was published to it')
  const hemctl = hemctlInProcess(['--url', a.base], join(dir, 'hemctl'))
  const status = await hemctl(['status'])
  t.equal(status.code, 0)
  t.match(status.stdout, `mirror: ERROR: ${first} does not continue the journal`, `hemctl says so\n${status.stdout}`)
  t.match(status.stdout, /--stream-generation/, 'and what to do')

  // The operator starts the next generation: the device reboots with --stream-generation 2.
  await a.device.stop()
  const generation = 2
  const device = await bootDevice(t, { dataDir, variant: 'E', backend: { url, domain: DOMAIN, generation } })
  const base = device.httpUrl!
  const second = journalStream(journalStreamId(devid, generation))
  t.equal(second, `HEM_JOURNAL_${devid}_2`)
  await configChanges(t, base, await login(base, 'system:config'), 1)
  await until('the second generation holds the whole journal', () => holdsJournal(api, second, dataDir), {
    ms: 60_000,
  })
  const oldest = (await readJournal(dataDir)).records[0]!
  const start = (await api.message(second, { seq: 1 }))!
  t.same(
    headerPosition(start.headers?.get(FILE_HEADER), start.headers?.get(SEQ_HEADER)),
    { file: oldest.file, seq: oldest.seq },
    'from the first record still on the device',
  )
  await caughtUp(t, base, second, 'status shows the new generation, nothing behind')
  const again = await streamHeads(api, second, logKey)
  t.same(again.bad, [], 'its signed heads verify')
  t.ok(again.lastSigned, 'and cover every record')
  t.equal((await api.info(first))!.lastSeq, foreign, 'the first generation is left as it was: evidence')

  const audit = async (generation: string) => {
    let out = ''
    const write = (text: string) => void (out += text)
    const key = Buffer.from(logKey).toString('base64')
    const argv = ['verify', '--stream', backend.url, '--device', devid, '--stream-generation', generation, '--key', key]
    const code = await auditCli([...argv, '--allow-open'], { stdout: { write }, stderr: { write }, env: {} })
    return { code, out }
  }
  const audited = await audit('2')
  t.equal(audited.code, 0, `hem-audit verifies the second generation on its own: ${audited.out}`)
  t.match(audited.out, `HEM_JOURNAL_${devid}_2`)
  t.equal((await audit('1')).code, 1, 'and finds the foreign message in the first')
  t.equal((await audit('0')).code, 2, 'a generation below 1 is a usage error')
})
