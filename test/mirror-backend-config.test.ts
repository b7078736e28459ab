// The fleet backend as docs/operations.md configures it, run as written (its placeholders filled in)
// against the real nats-server: a device mirrors through its own leaf user, an auditor reads on the
// client port, and no other device's user, nor the auditor, can write a message into its stream.

import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import t from 'tap'
import { StreamApi } from '../bus/stream-api.js'
import { journalStream, journalSubject } from '../bus/stream-names.js'
import { openHal } from '../hal/index.js'
import { builtFirmware, freePort, repoRoot } from './helpers/device.js'
import { DOMAIN, startBackend } from './helpers/jetstream-backend.js'
import { readJournal } from './helpers/journal.js'
import { startNats } from './helpers/nats.js'
import { bearer, owned, type Owned } from './helpers/owner.js'
import { call } from './helpers/http.js'
import { streamHeads } from './helpers/stream-heads.js'
import { until } from './helpers/until.js'

/** The nats-server configuration block of docs/operations.md's "Fleet backend". */
async function documentedConfig(): Promise<string> {
  const doc = await readFile(join(repoRoot, 'docs/operations.md'), 'utf8')
  const section = doc.slice(doc.indexOf('\n## Fleet backend\n'))
  const block = /```conf\n([^]*?)```/.exec(section)
  if (!block) throw new Error('docs/operations.md has no configuration block under "Fleet backend"')
  return block[1]!
}

/** The device user's entry, repeated for each device as the comment in the block says. */
const DEVICE_USER = / *\{ user: "dev-<DEVID>"[^]*?"_INBOX_mirror\.<DEVID>\.>" \] \} \} \}\n/

async function newDevid(dataDir: string): Promise<string> {
  const hal = await openHal({ variant: 'E', dataDir, firmware: await builtFirmware() })
  await hal.close()
  return hal.devid
}

async function configChange(o: Owned): Promise<void> {
  const answer = await call(`${o.base}/api/system/config`, {
    method: 'POST',
    headers: { ...bearer(o.token), 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ada+1@example.com' }),
  })
  if (answer.status !== 200) throw new Error(`the configuration change was refused: ${answer.text}`)
}

/** Whether a request on `subject` is answered at all (a refused publication is never delivered). */
async function answered(nc: NatsConnection, subject: string, data = ''): Promise<boolean> {
  try {
    await nc.request(subject, new TextEncoder().encode(data), { timeout: 1_500 })
    return true
  } catch {
    return false
  }
}

t.test("the documented backend: each device's user writes its own stream only", async (t) => {
  const dir = t.testdir()
  const [a, b] = [await newDevid(join(dir, 'a')), await newDevid(join(dir, 'b'))]
  const leafPort = await freePort()
  const documented = await documentedConfig()
  const deviceUser = DEVICE_USER.exec(documented)![0]
  const config = documented
    .replace(DEVICE_USER, `${deviceUser}${deviceUser.replaceAll('<DEVID>', b).replace('<DEVICE_PASSWORD>', 'pw-b')}`)
    .replaceAll('<DEVID>', a)
    .replace('<DEVICE_PASSWORD>', 'pw-a')
    .replace('<AUDITOR_PASSWORD>', 'pw-auditor')
    .replace('"0.0.0.0:4222"', '"127.0.0.1:-1"')
    .replace('"0.0.0.0:7422"', `"127.0.0.1:${leafPort}"`)
    .replace('"/var/lib/nats-fleet"', JSON.stringify(join(dir, 'backend', 'js')))
  t.notMatch(config, /<(DEVID|DEVICE_PASSWORD|AUDITOR_PASSWORD)>/, 'every placeholder is filled in')
  const backend = await startBackend(join(dir, 'backend'), { config })
  t.teardown(() => backend.stop())
  const auditor = await connect({ servers: backend.url, user: 'auditor', pass: 'pw-auditor' })
  t.teardown(() => auditor.close())
  const api = new StreamApi(auditor)

  const device = await owned(t, {
    dataDir: join(dir, 'a'),
    cfg: { trusted_backend: true },
    boot: { backend: { url: `nats://dev-${a}:pw-a@127.0.0.1:${leafPort}`, domain: DOMAIN } },
  })
  const stream = journalStream(a)
  const holds = async () =>
    (await api.info(stream))?.messages === (await readJournal(device.device.dataDir)).records.length
  await until('the device mirrors through its own leaf user', holds, { ms: 60_000 })
  const heads = await streamHeads(api, stream, device.device.logPublicKey)
  t.ok(heads.lastSigned && heads.bad.length === 0, 'the auditor reads it on the client port, signed heads and all')

  // Another device's leaf link: what it may publish is its own stream's.
  await mkdir(join(dir, 'rogue'))
  const rogue = await startNats(
    join(dir, 'rogue'),
    -1,
    `leafnodes { remotes: [ { url: "nats://dev-${b}:pw-b@127.0.0.1:${leafPort}" } ] }\n`,
  )
  t.teardown(() => rogue.stop())
  // Replies reach a leaf user only on its device's mirror inbox.
  const nc = await connect({ servers: rogue.url, inboxPrefix: `_INBOX_mirror.${b}` })
  t.teardown(() => nc.close())
  const own = JSON.stringify({ name: journalStream(b), subjects: [`hem.fleet.${b}.>`] })
  await until('the other device creates its own stream', () =>
    answered(nc, `$JS.${DOMAIN}.API.STREAM.CREATE.${journalStream(b)}`, own),
  )
  t.notOk(await answered(nc, journalSubject(a), '# forged\n'), "it cannot publish to the device's subject")
  const seen: string[] = []
  const snoop = nc.subscribe('_INBOX_mirror.>', { callback: (_err, msg) => void seen.push(msg.subject) })
  await nc.flush()
  await configChange(device)
  await until('the device mirrored its new record', holds, { ms: 60_000 })
  snoop.unsubscribe()
  t.same(seen, [], "nor read the replies the backend sends the device's mirror")
  t.notOk(
    await answered(nc, `$JS.${DOMAIN}.API.STREAM.INFO.${stream}`),
    "nor reach the JetStream API of the device's stream",
  )
  t.notOk(await answered(auditor, journalSubject(a), '# forged\n'), 'the auditor cannot publish to it either')
  t.ok(await holds(), 'the stream holds only what the device mirrored, one message per record')
})
