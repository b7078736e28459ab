// hem-audit reading a device's journal straight from its stream on a fleet backend that asks for
// credentials, over TLS, in batches; a message deleted from the stream is named; records after the
// last seal count only under the batch signature (Hem-Head-Sig) of the stream's newest batch.
import { generateKeyPairSync } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import t, { type Test } from 'tap'
import { main as audit } from '../cli/hem-audit/audit-cli.js'
import { headMessage, Journal, readLines } from '../eventstore/index.js'
import { StreamApi } from '../bus/stream-api.js'
import { loadStreamFiles } from '../cli/hem-audit/stream-input.js'
import {
  FILE_HEADER,
  HEAD_SIG_HEADER,
  journalStream,
  journalStreamConfig,
  journalSubject,
  SEQ_HEADER,
} from '../bus/stream-names.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { chainOver, forgedLine, options, readSet, signer } from './helpers/journal-fixtures.js'
import { startNats, type ExternalNats } from './helpers/nats.js'
import { issue, makeCa, pkcs8 } from './helpers/x509-fixtures.js'

const DEVID = '00000000000000a1'
const KEY = Buffer.from(signer.publicKey).toString('base64')
/** More records than a batch of the reader (256), so that it asks more than once. */
const RECORDS = 700

async function run(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  let out = ''
  const write = (s: string) => void (out += s)
  const code = await audit(argv, { stdout: { write }, stderr: { write }, env })
  return { code, out }
}

/**
 * A journal of RECORDS records in one closed file: the messages the mirror would publish, one per record with the
 * comment lines before it.
 */
async function journalMessages(
  dir: string,
): Promise<{ messages: Message[]; files: { id: string; bytes: Uint8Array }[] }> {
  const media = new FileJournalMedia(dir)
  const journal = await Journal.open(options(media))
  for (let i = 0; i < RECORDS; i += 50) {
    await journal.append(
      Array.from({ length: 50 }, (_, j) => ({
        type: LogType.CONFIG_UPDATED,
        result: LogResult.OK,
        data: { source: 200, rid: `r${i + j}` },
      })),
    )
  }
  await journal.close()
  const files = await readSet(media)
  const messages = []
  for (const { id, bytes } of files) {
    let pending: Uint8Array[] = []
    for (const line of readLines(bytes)) {
      pending.push(line.bytes)
      if (line.kind !== 'record') continue
      messages.push({ data: new Uint8Array(Buffer.concat(pending)), file: id, seq: line.record.seq.toString(16) })
      pending = []
    }
  }
  return { messages, files }
}

type Message = { data: Uint8Array; file: string; seq: string; sig?: string }

/** The messages with the last one carrying the batch signature the mirror puts on it: over its record's head. */
function signedBatch(messages: Message[]): Message[] {
  const last = messages.at(-1)!
  const file = Buffer.concat(messages.filter((m) => m.file === last.file).map((m) => m.data))
  const head = chainOver(last.file, file)
  const sig = Buffer.from(signer.sign(headMessage(last.file, parseInt(last.seq, 16), head))).toString('base64url')
  return [...messages.slice(0, -1), { ...last, sig }]
}

/** Creates the device's stream and publishes the messages to it, as the mirror does; `tls` for a tls:// backend. */
async function publish(
  url: string,
  devid: string,
  messages: Message[],
  o: {
    auth?: Record<string, string>
    config?: Record<string, unknown> & { name: string }
    tls?: { caFile: string }
  } = {},
): Promise<void> {
  const nc = await connect({ servers: url, ...o.auth, ...(o.tls ? { tls: o.tls } : {}) })
  try {
    const api = new StreamApi(nc)
    await api.create(o.config ?? journalStreamConfig(devid))
    for (const m of messages)
      await api.publish(journalSubject(devid), m.data, {
        [FILE_HEADER]: m.file,
        [SEQ_HEADER]: m.seq,
        ...(m.sig ? { [HEAD_SIG_HEADER]: m.sig } : {}),
      })
  } finally {
    await nc.close()
  }
}

async function backend(t: Test, name: string, config: string): Promise<ExternalNats> {
  const dir = join(t.testdirName, name)
  await mkdir(join(dir, 'js'), { recursive: true })
  const nats = await startNats(dir, -1, `jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }\n${config}`)
  t.teardown(() => nats.stop())
  return nats
}

t.test(
  'a backend that asks for a user and password, or a token: from the environment, never the command line',
  async (t) => {
    t.testdir()
    const { messages, files } = await journalMessages(join(t.testdirName, 'journal'))
    const users = await backend(t, 'users', 'authorization { users: [ { user: auditor, password: "s3cret-pw" } ] }')
    await publish(users.url, DEVID, messages, { auth: { user: 'auditor', pass: 's3cret-pw' } })
    const args = ['verify', '--stream', users.url, '--device', DEVID, '--key', KEY]

    const ok = await run(args, { HEM_NATS_USER: 'auditor', HEM_NATS_PASSWORD: 's3cret-pw' })
    t.equal(ok.code, 0, ok.out)
    const local = await run(['verify', '--key', KEY, join(t.testdirName, 'journal')])
    t.equal(
      ok.out.split('\n')[0],
      local.out.split('\n')[0],
      `every record, as in the files (${messages.length} messages, more than one batch)`,
    )
    const without = await run(args)
    t.equal(without.code, 1, 'no credentials: refused')
    t.match(without.out, /cannot reach .*: .*[Aa]uthorization/)
    const wrong = await run(args, { HEM_NATS_USER: 'auditor', HEM_NATS_PASSWORD: 'wrong' })
    t.equal(wrong.code, 1)
    t.notMatch(wrong.out, /wrong|s3cret/, 'no password in the answer')
    t.equal((await run(args, { HEM_NATS_USER: 'auditor' })).code, 2, 'a user without a password is a usage error')
    t.equal(
      (await run(args, { HEM_NATS_TOKEN: 't', HEM_NATS_USER: 'auditor', HEM_NATS_PASSWORD: 'p' })).code,
      2,
      'a token and a user: usage error',
    )

    const loaded = await loadStreamFiles({ url: users.url, devid: DEVID, auth: { user: 'auditor', pass: 's3cret-pw' } })
    t.same(
      loaded.files.map((f) => f.id),
      files.map((f) => f.id),
    )
    t.ok(
      loaded.files.every((f, i) => Buffer.from(f.bytes).equals(files[i]!.bytes)),
      'the files rebuilt byte for byte',
    )

    const tokens = await backend(t, 'token', 'authorization { token: "tok-123" }')
    await publish(tokens.url, DEVID, messages, { auth: { token: 'tok-123' } })
    const byToken = await run(['verify', '--stream', tokens.url, '--device', DEVID, '--key', KEY], {
      HEM_NATS_TOKEN: 'tok-123',
    })
    t.equal(byToken.code, 0, byToken.out)
  },
)

t.test('a tls:// backend is checked against --tls-ca', async (t) => {
  t.testdir()
  const { messages } = await journalMessages(join(t.testdirName, 'journal'))
  const dir = t.testdirName
  const ca = await makeCa('fleet test CA')
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const pem = (label: string, der: Uint8Array) =>
    `-----BEGIN ${label}-----\n` +
    `${Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n')}\n` +
    `-----END ${label}-----\n`
  const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') }
  await writeFile(files.ca, pem('CERTIFICATE', ca.cert))
  await writeFile(
    files.cert,
    pem(
      'CERTIFICATE',
      await issue(ca, privateKey, 'backend', {
        altNames: [
          { type: 'ip', value: '127.0.0.1' },
          { type: 'dns', value: 'localhost' },
        ],
      }),
    ),
  )
  await writeFile(files.key, pem('PRIVATE KEY', pkcs8(privateKey)))
  const nats = await backend(
    t,
    'tls',
    `tls { cert_file: ${JSON.stringify(files.cert)}, key_file: ${JSON.stringify(files.key)} }`,
  )
  const url = nats.url.replace('nats://', 'tls://')
  await publish(url, DEVID, signedBatch(messages.slice(0, 20)), { tls: { caFile: files.ca } })

  const args = ['verify', '--stream', url, '--device', DEVID, '--key', KEY, '--allow-open']
  const unknown = await run(args)
  t.equal(unknown.code, 1, 'a certificate of a CA the system does not know: refused')
  t.match(unknown.out, /cannot reach/)
  const checked = await run([...args, '--tls-ca', files.ca])
  t.equal(checked.code, 0, checked.out)
})

t.test('a message deleted from the stream is named by its sequence, in the middle or at the end', async (t) => {
  t.testdir()
  const { messages } = await journalMessages(join(t.testdirName, 'journal'))
  const nats = await backend(t, 'plain', '')
  for (const [devid, deleted] of [
    ['00000000000000d1', 300],
    ['00000000000000d2', messages.length],
  ] as const) {
    await publish(nats.url, devid, messages, { config: { ...journalStreamConfig(devid), deny_delete: false } })
    const nc = await connect({ servers: nats.url })
    const reply = await nc.request(
      `$JS.API.STREAM.MSG.DELETE.${journalStream(devid)}`,
      JSON.stringify({ seq: deleted }),
    )
    t.match(JSON.parse(new TextDecoder().decode(reply.data)), { success: true }, `message ${deleted} deleted`)
    await nc.close()
    const result = await run(['verify', '--stream', nats.url, '--device', devid, '--key', KEY])
    t.equal(result.code, 1)
    t.match(result.out, `${journalStream(devid)} message ${deleted}: missing (deleted from the stream)`, result.out)
  }
})

t.test('records after the last seal count only under the newest batch signature; a forged tail does not', async (t) => {
  t.testdir()
  const { messages } = await journalMessages(join(t.testdirName, 'journal'))
  const nats = await backend(t, 'signed', '')
  const args = (devid: string) => ['verify', '--stream', nats.url, '--device', devid, '--key', KEY, '--allow-open']
  const open = messages.slice(0, 20)

  await publish(nats.url, '00000000000000e1', open)
  const unsigned = await run(args('00000000000000e1'))
  t.equal(unsigned.code, 1, 'no signature: the open tail is unverified')
  t.match(unsigned.out, /HEM_JOURNAL_00000000000000e1\/\S+:seq 13: unverified/)

  await publish(nats.url, '00000000000000e2', signedBatch(open))
  const signed = await run(args('00000000000000e2'))
  t.equal(signed.code, 0, signed.out)

  // A backend operator appends a record with a valid MAC (K is in KEY_INIT) after the signed batch.
  const last = open.at(-1)!
  const bytes = Buffer.concat(open.map((m) => m.data))
  const forged = forgedLine(bytes, {
    type: LogType.CONFIG_UPDATED,
    data: { changed: { email: 'mallory@example.com' } },
  })
  const extra = { data: forged.subarray(bytes.length), file: last.file, seq: (parseInt(last.seq, 16) + 1).toString(16) }
  await publish(nats.url, '00000000000000e3', [...signedBatch(open), extra])
  const tail = await run(args('00000000000000e3'))
  t.equal(tail.code, 1, 'the forged record is unverified')
  t.match(tail.out, `:seq ${extra.seq}: unverified`)
  const replayed = await run(['replay', ...args('00000000000000e3').slice(1)])
  t.equal(replayed.code, 1)
  t.notMatch(replayed.out, 'mallory', 'and never replayed')

  // The same, with the header of the real batch copied onto it: the signature is not over this record.
  await publish(nats.url, '00000000000000e4', [...signedBatch(open), { ...extra, sig: signedBatch(open).at(-1)!.sig }])
  const copied = await run(args('00000000000000e4'))
  t.equal(copied.code, 1)
  t.match(copied.out, `the signature of HEM_JOURNAL_00000000000000e4 message 21 at ${last.file}:seq ${extra.seq}`)
})

t.test('what is wrong with the stream itself is named by its message sequence', async (t) => {
  t.testdir()
  const { messages } = await journalMessages(join(t.testdirName, 'journal'))
  const nats = await backend(t, 'faults', '')
  const verify = (devid: string, ...more: string[]) =>
    run(['verify', '--stream', nats.url, '--device', devid, '--key', KEY, '--allow-open', ...more])
  const stream = (n: number) => journalStream(`00000000000000c${n}`)

  await publish(nats.url, '00000000000000c1', [])
  t.match(await verify('00000000000000c1'), { code: 1, out: `the stream ${stream(1)} is empty` })
  t.match(await verify('00000000000000c2'), { code: 1, out: `there is no stream ${stream(2)}` })
  const [m0, m1, m2, m3] = messages as [Message, Message, Message, Message]
  const faults: [string, Message[], string][] = [
    [
      'a message that names no record',
      [m0, { ...m1, file: 'notafile' }],
      `${stream(3)} message 2: names no journal record`,
    ],
    ['a record twice', [m0, m1, m1], `${stream(4)} message 3: ${m1.file}:seq 1 a second time, after message 2`],
    [
      'records out of order',
      [m0, m1, m2, m1],
      `${stream(5)} message 4: ${m1.file}:seq 1 out of order, after message 3`,
    ],
    [
      'a record left out',
      [m0, m1, m3],
      `${stream(6)} message 3: ${m3.file}:seq 3 follows ${m1.file}:seq 1: seq 2 is missing`,
    ],
  ]
  for (const [i, [what, published, message]] of faults.entries()) {
    const devid = `00000000000000c${i + 3}`
    await publish(nats.url, devid, published)
    t.match(await verify(devid), { code: 1, out: message }, what)
  }
  await publish(nats.url, '00000000000000c7', [...messages.slice(0, 19), { ...messages[19]!, sig: '!' }])
  t.match(
    await verify('00000000000000c7'),
    { code: 1, out: `the signature of ${stream(7)} message 20 at ${messages[19]!.file}:seq 13 does not verify` },
    'a batch signature that is not even base64url',
  )
  t.match(
    await verify('00000000000000c7', '--domain', 'elsewhere'),
    { code: 1, out: /^hem-audit verify: cannot read the stream: \$JS\.elsewhere\.API\.STREAM\.INFO\./ },
    'a JetStream domain that does not answer',
  )

  const usage: [string[], RegExp][] = [
    [['--stream', 'http://127.0.0.1:4222', '--device', '00000000000000c1'], /--stream must be a nats:\/\/ or tls:\/\//],
    [['--stream', nats.url, '--device', 'C1'], /--device must be the devid: 16 lowercase hex chars/],
    [['--stream', nats.url], /--stream and --device go together/],
    [['--device', '00000000000000c1'], /--stream and --device go together/],
    [['--stream', nats.url, '--device', '00000000000000c1', t.testdirName], /give --stream or files, not both/],
  ]
  for (const [argv, message] of usage)
    t.match(await run(['verify', '--key', KEY, ...argv]), { code: 2, out: message }, argv.join(' '))
})
