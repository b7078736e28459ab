// Fleet audit on JetStream: two devices mirror their journals through a leaf-node link into a
// backend nats-server with JetStream, across a network cut; every record lands exactly once, in
// order and byte for byte, hem-audit verifies straight from the streams, and the backend reaches
// nothing of the devices.

import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import t, { type Test } from 'tap'
import { main as audit } from '../cli/hem-audit/audit-cli.js'
import { StreamApi, type StoredMessage } from '../bus/stream-api.js'
import { loadStreamFiles } from '../cli/hem-audit/stream-input.js'
import {
  FILE_HEADER,
  headerPosition,
  journalStream,
  journalStreamConfig,
  journalSubject,
  SEQ_HEADER,
} from '../bus/stream-names.js'
import { readLines } from '../eventstore/index.js'
import { freePort } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { valueOf } from './helpers/metrics.js'
import { bearer, login, owned, type Owned } from './helpers/owner.js'
import { startTcpProxy } from './helpers/tcp-proxy.js'
import { until } from './helpers/until.js'
import { DOMAIN, startBackend } from './helpers/jetstream-backend.js'

let changes = 0

/** Journal records a device writes: a change of its configuration (CONFIG_UPDATED) each time. */
async function activity(t: Test, o: Owned, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const answer = await postConfig(o, { email: `ada+${++changes}@example.com` })
    t.equal(answer.status, 200, `a configuration change: ${answer.text}`)
  }
}

function postConfig(o: Owned, body: unknown) {
  return call(`${o.base}/api/system/config`, {
    method: 'POST',
    headers: { ...bearer(o.token), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

/** The device's last record as stored now. */
async function journalEnd(o: Owned): Promise<{ file: string; seq: number }> {
  const { records } = await readJournal(o.device.dataDir)
  const last = records.at(-1)!
  return { file: last.file, seq: last.seq }
}

/** The stream's last record, if any. */
async function streamEnd(api: StreamApi, devid: string): Promise<{ file: string; seq: number } | undefined> {
  const info = await api.info(journalStream(devid))
  if (!info || info.messages === 0) return undefined
  const last = await api.message(journalStream(devid), { seq: info.lastSeq })
  return last && headerPosition(last.headers?.get(FILE_HEADER), last.headers?.get(SEQ_HEADER))
}

async function mirrored(api: StreamApi, o: Owned): Promise<boolean> {
  const [end, stream] = [await journalEnd(o), await streamEnd(api, o.device.devid)]
  return stream !== undefined && stream.file === end.file && stream.seq === end.seq
}

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  let out = ''
  const write = (s: string) => void (out += s)
  const code = await audit(argv, { stdout: { write }, stderr: { write } })
  return { code, out }
}

interface MirrorView {
  state: string
  lag?: { records: number; oldest?: number }
}

async function status(o: Owned): Promise<{ mirror: MirrorView }> {
  return (await call(`${o.base}/api/system/status`)).json as { mirror: MirrorView }
}

/**
 * While the stream stands still, status and /metrics count the journal's records after the stream's last, and date
 * the oldest of them.
 */
async function lagShows(t: Test, api: StreamApi, o: Owned): Promise<void> {
  const end = (await streamEnd(api, o.device.devid))!
  const expected = async () => {
    const after = (await readJournal(o.device.dataDir)).records.filter(
      (r) => r.file > end.file || (r.file === end.file && r.seq > end.seq),
    )
    return { records: after.length, oldest: after[0]?.time }
  }
  let seen: MirrorView | undefined
  await until('status shows the lag of the cut', async () => {
    seen = (await status(o)).mirror
    const want = await expected()
    return seen.state === 'unreachable' && seen.lag?.records === want.records && seen.lag.oldest === want.oldest
  })
  t.ok(seen!.lag!.records >= 2, `the records written during the cut are behind: ${JSON.stringify(seen!.lag)}`)
  const token = await login(o.base, 'system:metrics')
  const metrics = (await call(`${o.base}/metrics`, { headers: bearer(token) })).text
  t.ok(valueOf(metrics, 'hem_mirror_lag_records')! >= seen!.lag!.records, '/metrics counts them too')
  // The oldest was written before the test's 1.5 s wait of the cut.
  t.ok(valueOf(metrics, 'hem_mirror_lag_seconds')! > 1, 'and gives the age of the oldest')
  t.equal(valueOf(metrics, 'hem_mirror_state', { state: 'unreachable' }), 1)
}

const keyOf = (o: Owned) => Buffer.from(o.device.logPublicKey).toString('base64')

t.test('two devices mirror their journals across a network cut, exactly once', async (t) => {
  const dir = t.testdir()
  const leafPort = await freePort()
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: leafPort })
  t.teardown(() => proxy.close())
  const backend = await startBackend(join(dir, 'backend'), { leafPort, advertise: proxy.port })
  t.teardown(() => backend.stop())
  const hub: NatsConnection = await connect({ servers: backend.url })
  t.teardown(() => hub.close())
  const api = new StreamApi(hub)
  const boot = { backend: { url: `nats://127.0.0.1:${proxy.port}`, domain: DOMAIN } }
  // A trusts the backend from its personalisation on; B not until its owner says so.
  // B runs --split: its mirror lives in the eventstore's process, on the mirror user the supervisor hands it.
  const a = await owned(t, { variant: 'E', dataDir: join(dir, 'a'), cfg: { trusted_backend: true }, boot })
  const b = await owned(t, { variant: 'E', dataDir: join(dir, 'b'), boot: { ...boot, split: true } })

  await activity(t, a, 2)
  await activity(t, b, 2)
  await until('A mirrored its journal so far', () => mirrored(api, a), 60_000)
  t.equal(
    await api.info(journalStream(b.device.devid)),
    undefined,
    'B, without trusted_backend, mirrored nothing: not even its stream exists',
  )

  t.test('the backend reaches nothing of a device over the leaf link', async (t) => {
    await t.rejects(
      hub.request(`hem.${a.device.devid}.cmd.system.status`, new Uint8Array(0), { timeout: 2_000 }),
      'a command from the backend finds no service',
    )
    await t.rejects(
      hub.request(`hem.${a.device.devid}.cmd.auth.state`, new Uint8Array(0), { timeout: 2_000 }),
      'nor the read model of auth',
    )
    const seen: string[] = []
    const sub = hub.subscribe(`hem.${a.device.devid}.>`, { callback: (_err, msg) => void seen.push(msg.subject) })
    await hub.flush()
    await activity(t, a, 1)
    await until('A mirrored its new records', () => mirrored(api, a), 60_000)
    sub.unsubscribe()
    t.same(seen, [], "the backend saw none of the device's commands or events, though the device worked")
  })

  proxy.cut()
  await activity(t, a, 2)
  await activity(t, b, 1)
  t.equal(
    (await postConfig(b, { trusted_backend: true })).status,
    200,
    "B's owner trusts the backend now, during the cut",
  )
  await activity(t, b, 1)
  await sleep(1_500)
  t.notOk(await mirrored(api, a), 'nothing crosses while the network is cut')
  await lagShows(t, api, a)
  proxy.restore()
  await activity(t, a, 1)
  await activity(t, b, 1)
  await until('A caught up after the cut', () => mirrored(api, a), 90_000)
  await until('B mirrored its whole journal', () => mirrored(api, b), 90_000)
  for (const [o, name] of [
    [a, 'A'],
    [b, 'B, whose stream began empty'],
  ] as const)
    await until(`${name} shows no lag once caught up`, async () => {
      const mirror = (await status(o)).mirror
      return mirror.state === 'mirroring' && mirror.lag?.records === 0 && mirror.lag.oldest === undefined
    })

  await holdsExactlyOnce(t, backend.url, api, a, 'A')
  await holdsExactlyOnce(t, backend.url, api, b, 'B')
  const replayed = await run([
    'replay',
    '--stream',
    backend.url,
    '--device',
    b.device.devid,
    '--key',
    keyOf(b),
    '--allow-open',
    '--json',
  ])
  t.equal(replayed.code, 0, `hem-audit replay --stream: ${replayed.out.slice(0, 300)}`)
  t.equal(
    JSON.parse(replayed.out).config.trusted_backend,
    true,
    'the replay from the stream tells B trusts its backend',
  )

  t.test('the owner turns mirroring off: nothing more leaves the device', async (t) => {
    t.equal((await postConfig(a, { trusted_backend: false })).status, 200)
    const before = (await api.info(journalStream(a.device.devid)))!.messages
    await activity(t, a, 1)
    // B mirroring its new records shows that the mirrors had time to act.
    await activity(t, b, 1)
    await until('B mirrored again', () => mirrored(api, b), 60_000)
    t.equal((await api.info(journalStream(a.device.devid)))!.messages, before, 'A published nothing more')
  })

  t.test('trusted again, A resumes where it left, across a reboot', async (t) => {
    t.equal((await postConfig(a, { trusted_backend: true })).status, 200)
    await activity(t, a, 1)
    await a.device.restart()
    a.token = await login(a.base, 'system:config')
    await activity(t, a, 1)
    await until('A mirrored its journal across the reboot', () => mirrored(api, a), 90_000)
    await until('with no lag across the two files', async () => (await status(a)).mirror.lag?.records === 0)
    t.equal((await readJournal(a.device.dataDir)).files.length, 2, 'the reboot opened a second journal file')
    await holdsExactlyOnce(t, backend.url, api, a, 'A')
  })

  t.test('hem-audit names the place when a stream was tampered with', async (t) => {
    const source = journalStream(a.device.devid)
    const info = (await api.info(source))!
    const messages: StoredMessage[] = []
    for (let seq = info.firstSeq; seq <= info.lastSeq; seq++) messages.push((await api.message(source, { seq }))!)
    // Forged streams under other device ids, built by hand from A's messages.
    const forge = async (devid: string, change: (data: Uint8Array, index: number) => Uint8Array | undefined) => {
      await api.create(journalStreamConfig(devid))
      for (const [index, message] of messages.entries()) {
        const data = change(message.data, index)
        if (!data) continue
        await api.publish(journalSubject(devid), data, {
          [FILE_HEADER]: message.headers!.get(FILE_HEADER),
          [SEQ_HEADER]: message.headers!.get(SEQ_HEADER),
        })
      }
    }
    const target = 6
    const targetSeq = message(messages[target]!)
    await forge('00000000000000f1', (data, index) => (index === target ? tamper(data) : data))
    const tampered = await run([
      'verify',
      '--stream',
      backend.url,
      '--device',
      '00000000000000f1',
      '--key',
      keyOf(a),
      '--allow-open',
    ])
    t.equal(tampered.code, 1, 'a changed line fails')
    t.match(
      tampered.out,
      `${journalStream('00000000000000f1')}/${targetSeq.file}:seq ${targetSeq.seq}:`,
      `names the file and seq\n${tampered.out}`,
    )
    await forge('00000000000000f2', (data, index) => (index === target ? undefined : data))
    const missing = await run([
      'verify',
      '--stream',
      backend.url,
      '--device',
      '00000000000000f2',
      '--key',
      keyOf(a),
      '--allow-open',
    ])
    t.equal(missing.code, 1, 'a missing message fails')
    t.match(
      missing.out,
      `message ${target + 1}: ${targetSeq.file}:seq ${(parseInt(targetSeq.seq, 16) + 1).toString(16)} follows`,
      `names the stream sequence and the record\n${missing.out}`,
    )
  })

  t.test('a second writer on the stream: the mirror does not interleave', async (t) => {
    const stream = journalStream(a.device.devid)
    const before = (await api.info(stream))!.messages
    await hub.request(journalSubject(a.device.devid), new TextEncoder().encode('# not a record of the device\n'))
    await activity(t, a, 1)
    await activity(t, b, 1)
    await until('B mirrored again', () => mirrored(api, b), 60_000)
    t.equal((await api.info(stream))!.messages, before + 1, "A's mirror published nothing after the foreign message")
    const verified = await run([
      'verify',
      '--stream',
      backend.url,
      '--device',
      a.device.devid,
      '--key',
      keyOf(a),
      '--allow-open',
    ])
    t.equal(verified.code, 1, 'and hem-audit refuses the stream')
    t.match(verified.out, `${stream} message ${before + 1}: names no journal record`, verified.out)
  })
})

/** The stream holds every record of the device's journal once, in order, byte for byte, and verifies. */
async function holdsExactlyOnce(t: Test, url: string, api: StreamApi, o: Owned, name: string): Promise<void> {
  // The device keeps journaling (a periodic seal, say) while it runs: compare a journal and a
  // stream read when the stream had caught up with that journal.
  let journal = await readJournal(o.device.dataDir)
  let stream = await loadStreamFiles({ url, devid: o.device.devid })
  await until(
    `${name}: the stream caught up with the journal it is compared with`,
    async () => {
      journal = await readJournal(o.device.dataDir)
      stream = await loadStreamFiles({ url, devid: o.device.devid })
      return (
        stream.files.reduce((n, f) => n + f.bytes.length, 0) === journal.files.reduce((n, f) => n + f.bytes.length, 0)
      )
    },
    60_000,
  )
  t.same(
    stream.files.map((f) => f.id),
    journal.files.map((f) => f.id),
    `${name}: the stream holds every journal file`,
  )
  for (const [i, file] of journal.files.entries()) {
    t.ok(
      Buffer.from(stream.files[i]!.bytes).equals(file.bytes),
      `${name}: file ${file.id} rebuilt from the stream is the journal's, byte for byte`,
    )
  }
  const info = (await api.info(journalStream(o.device.devid)))!
  t.equal(
    info.messages,
    journal.records.length,
    `${name}: one message per record (${journal.records.length}), none twice`,
  )
  const verified = await run(['verify', '--stream', url, '--device', o.device.devid, '--key', keyOf(o), '--allow-open'])
  t.equal(verified.code, 0, `${name}: hem-audit verify --stream passes`)
  t.match(verified.out, /\nOK\n$/, verified.out)
}

function message(m: { headers?: { get(name: string): string } | undefined }): { file: string; seq: string } {
  return { file: m.headers!.get(FILE_HEADER), seq: m.headers!.get(SEQ_HEADER) }
}

/** The same record with one character of its MAC changed. */
function tamper(data: Uint8Array): Uint8Array {
  const lines = [...readLines(data)]
  const last = Buffer.from(lines.at(-1)!.bytes)
  last[last.length - 2] = last[last.length - 2] === 0x41 ? 0x42 : 0x41
  return new Uint8Array(Buffer.concat([...lines.slice(0, -1).map((l) => l.bytes), last]))
}
