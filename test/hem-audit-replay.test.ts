// hem-audit replay and replayDevice: the device's state rebuilt offline from its journal files.
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../cli/hem-audit/audit-cli.js'
import { Journal, JournalReplayError, TamperedJournalError } from '../eventstore/index.js'
import { LogType, type JournalEntry } from '../protocol/journal.js'
import { ReplayPointError, replayDevice } from '../audit/index.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { factoryConfig } from '../machines/config.js'
import {
  deviceBanner,
  fixedClock,
  KIDS,
  options,
  PERSONALISED_CONFIG,
  readSet,
  signedHeadOf,
  signer,
  transition,
  writeDeviceJournal,
} from './helpers/journal-fixtures.js'
import { runCli } from './helpers/cli-output.js'

const KEY = Buffer.from(signer.publicKey).toString('base64')

const run = (...argv: string[]) => runCli(main, argv)

const AES = { type: 'ATT,PKEY,AES256', created: 1_700_000_030 }
const CONFIG = {
  ...factoryConfig('P'),
  ...PERSONALISED_CONFIG,
  instanceid: 'f'.repeat(32),
  iat: 1_700_000_020,
  uts: 1_700_000_020,
}

t.test(
  'three boots fold through the runtime machines: identity, config and keys persist, the rest starts afresh',
  async (t) => {
    const dir = t.testdir()
    const { boots } = await writeDeviceJournal(dir)
    const files = await readSet(new FileJournalMedia(dir))
    const state = replayDevice(files, signer.publicKey)
    t.same(state, {
      at: { file: boots[2]![0], seq: 5, time: 1_700_000_270 },
      boots: 3,
      variant: 'P',
      personalisation: 'personalised',
      provisioning: 'provisioned',
      config: { ...CONFIG, user: 'Bob', uts: 1_700_000_160 },
      disks: { '0': 'locked', '1': 'unformatted' },
      upgrades: { fw: 'idle', ui: 'idle' },
      health: { state: 'secure', fls: 0 },
      lifecycle: 'running',
      // The ec key was deleted; the ED25519 key's creation failed and was journaled as undone.
      keys: { [KIDS.aes]: { ...AES, updated: 1_700_000_170 } },
      // A journal of a build before the key machine: the keys' states are derived from their records.
      keyStates: { [KIDS.aes]: 'in_service' },
    })
    t.same(JSON.parse(JSON.stringify(state)), state, 'plain JSON data')

    const json = await run('replay', '--json', '--key', KEY, dir)
    t.equal(json.code, 0)
    t.same(JSON.parse(json.stdout), state, 'the command prints what the library rebuilt')
    const text = await run('replay', '--key', KEY, dir)
    t.equal(text.code, 0)
    t.match(
      text.stdout,
      `at: ${join(dir, `${boots[2]![0]}.log`)}:seq 5 (2023-11-14T22:17:50.000Z), boot 3\n` +
        'variant: P\npersonalisation: personalised\n',
    )
    t.match(
      text.stdout,
      '\nhealth: secure (fls_state 0x00)\ndisks: 0 locked, 1 unformatted\n' +
        'upgrades: fw idle, ui idle\nconfig:\n  user: "Bob"\n',
    )
    t.match(text.stdout, '\n  storage_mode: 0x53\n')
    t.match(
      text.stdout,
      `\nkeys: 1\n  ${KIDS.aes}  ATT,PKEY,AES256  created 2023-11-14T22:13:50.000Z  updated 2023-11-14T22:16:10.000Z\n`,
    )
  },
)

t.test('--at a record or a time: the state as of then', async (t) => {
  const dir = t.testdir()
  const { marks, start } = await writeDeviceJournal(dir)
  const files = await readSet(new FileJournalMedia(dir))
  const endOfBoot1 = {
    boots: 1,
    personalisation: 'personalised',
    config: CONFIG,
    disks: { '0': 'rw', '1': 'locked' },
    upgrades: { fw: 'receiving', ui: 'idle' },
    health: { state: 'failed', fls: 0x04 },
    lifecycle: 'stopped',
    keys: {
      [KIDS.aes]: { ...AES, updated: AES.created },
      [KIDS.ec]: { type: 'ExDSA,SECP256R1', created: AES.created, updated: AES.created },
    },
  }
  const position = `${marks.shutdown.file}:${marks.shutdown.seq.toString(16)}`
  t.match(replayDevice(files, signer.publicKey, { at: marks.shutdown }), {
    ...endOfBoot1,
    at: { ...marks.shutdown, time: start + 50 },
  })
  const cli = await run('replay', '--json', '--key', KEY, '--at', position, dir)
  t.equal(cli.code, 0)
  t.match(JSON.parse(cli.stdout), endOfBoot1)

  const updated = replayDevice(files, signer.publicKey, { at: marks.updated })
  t.match(updated, {
    boots: 2,
    config: { user: 'Bob' },
    disks: { '0': 'rw', '1': 'locked' },
    upgrades: { fw: 'idle' },
    health: { fls: 0 },
    lifecycle: 'running',
  })
  t.equal(Object.keys(updated.keys).length, 2, 'the key changes come later')

  // Records of the same second all count: the last one at start + 20 is Disk 1's FORMATTED (seq b).
  const expected = {
    at: { file: marks.personalised.file, seq: 0xb },
    personalisation: 'personalised',
    keys: {},
    disks: { '0': 'rw', '1': 'locked' },
  }
  t.match(replayDevice(files, signer.publicKey, { at: { time: start + 20 } }), expected)
  for (const form of [String(start + 29), '2023-11-14T22:13:49Z', '2023-11-14T23:13:49+01:00']) {
    const answer = await run('replay', '--json', '--key', KEY, '--at', form, dir)
    t.equal(answer.code, 0, form)
    t.match(JSON.parse(answer.stdout), expected, form)
  }

  t.throws(() => replayDevice(files, signer.publicKey, { at: { time: start - 1 } }), ReplayPointError)
  const cases: [string, RegExp][] = [
    [String(start - 1), /--at: no record is at or before 2023-11-14T22:13:19.000Z: the journal starts later/],
    [`${marks.shutdown.file}:ff`, /--at: no record 6553f100:ff in the files given/],
    ['yesterday', /--at: 'yesterday' is neither FILEID:SEQ/],
    ['2023-11-14T22:13:49', /is neither/],
  ]
  for (const [at, message] of cases) {
    const answer = await run('replay', '--key', KEY, '--at', at, dir)
    t.equal(answer.code, 2, at)
    t.match(answer.stderr, message)
  }
})

t.test('the newest file of a running device is open: replayed with --allow-open and its signed head', async (t) => {
  const dir = t.testdir()
  await writeDeviceJournal(dir, true)
  const head = join(dir, 'head.json')
  await writeFile(head, JSON.stringify(await signedHeadOf(new FileJournalMedia(dir))))
  const refused = await run('replay', '--key', KEY, dir)
  t.equal(refused.code, 1)
  t.match(
    refused.stderr,
    new RegExp(
      /^hem-audit replay: the files do not verify; nothing in them is replayed:\n/.source +
        / {2}\S+:seq 4: file ends with 5 unsealed record\(s\)/.source,
    ),
  )
  const unsigned = await run('replay', '--json', '--allow-open', '--key', KEY, dir)
  t.equal(unsigned.code, 1, 'records no seal or signed head covers are not replayed')
  t.match(unsigned.stderr, /:seq 4: unverified: no seal or signed head covers this record/)
  const open = await run('replay', '--json', '--allow-open', '--head', head, '--key', KEY, dir)
  t.equal(open.code, 0)
  t.match(JSON.parse(open.stdout), { boots: 3, lifecycle: 'running', disks: { '0': 'locked' } })
})

/** E's personalisation (no disk to format) by M with `cfg`, at second 5. */
function personalisedWithoutFormat(cfg: Record<string, unknown>): JournalEntry[] {
  return [
    transition('personalisation', 'fresh', 'personalised', 'PERSONALISE'),
    {
      type: LogType.DEVICE_INITED,
      result: 0,
      subject: 'M',
      data: { source: 200, cfg, instanceid: 'e'.repeat(32), at: 5 },
    },
  ]
}

/** One closed file of a device of `variant` holding `batches`; returns its path. */
async function oneFile(dir: string, batches: JournalEntry[][], banner = deviceBanner('P')): Promise<string> {
  const media = new FileJournalMedia(dir)
  const journal = await Journal.open(options(media, { clock: fixedClock() }, banner))
  for (const batch of batches) await journal.append(batch)
  await journal.close()
  return join(dir, `${journal.fileId}.log`)
}

t.test('what cannot be trusted or is not known is refused, naming the file and the record', async (t) => {
  const tampered = t.testdir()
  const { boots } = await writeDeviceJournal(tampered)
  const path = join(tampered, `${boots[0]![0]}.log`)
  const text = await readFile(path, 'utf8')
  await writeFile(path, text.replace('|1|U|', '|0|U|'))
  const answer = await run('replay', '--key', KEY, tampered)
  t.equal(answer.code, 1)
  t.equal(answer.stdout, '')
  t.match(answer.stderr, `the files do not verify; nothing in them is replayed:\n  ${path}:seq f: MAC does not match\n`)
  t.throws(
    () => replayDevice([{ id: boots[0]![0]!, bytes: Buffer.from(text.replace('|1|U|', '|0|U|')) }], signer.publicKey),
    TamperedJournalError,
  )

  const started = t.testdir()
  await writeDeviceJournal(started)
  await rm(join(started, `${boots[0]![0]}.log`))
  t.match((await run('replay', '--key', KEY, started)).stderr, 'which is not given: older files are missing')
  const incomplete = await run('replay', '--allow-missing-start', '--key', KEY, started)
  t.equal(incomplete.code, 1)
  t.match(
    incomplete.stderr,
    `${join(started, `${boots[1]![0]}.log`)}: the history is incomplete: ` +
      `it links to ${boots[0]![0]}, which is not among the files given`,
  )

  const ready = transition('lifecycle', 'booting', 'running', 'READY')
  const cases: [string, JournalEntry[], RegExp, string?][] = [
    [
      'an unknown machine version',
      [transition('disk', 'unformatted', 'locked', 'FORMATTED', '0', 2)],
      /:seq 2: disk 0 version 2 is unknown \(this runtime knows 1\)/,
    ],
    [
      'an unknown instance',
      [transition('disk', 'unformatted', 'locked', 'FORMATTED', '2')],
      /:seq 2: no 'disk' instance '2' machine runs on variant P/,
    ],
    [
      'an unknown machine',
      [transition('toaster', 'cold', 'hot', 'ON')],
      /:seq 2: no 'toaster' machine runs on variant P/,
    ],
    [
      'disks on E',
      [transition('disk', 'unformatted', 'locked', 'FORMATTED', '0')],
      /:seq 2: no 'disk' instance '0' machine runs on variant E/,
      deviceBanner('E'),
    ],
    [
      'a transition the machine does not make',
      [transition('disk', 'unformatted', 'rw', 'UNLOCK_RW', '1')],
      /:seq 2: disk 1: UNLOCK_RW leads from unformatted to unformatted, not rw/,
    ],
    [
      'a transition from elsewhere',
      [ready, transition('lifecycle', 'booting', 'running', 'READY')],
      /:seq 3: lifecycle: a transition from booting while in running/,
    ],
    [
      'a malformed transition',
      [{ type: LogType.TRANSITION, result: 0, data: { machine: 'disk', version: '1' } }],
      /:seq 2: TRANSITION data is malformed/,
    ],
    ['a transition without data', [{ type: LogType.TRANSITION, result: 0 }], /:seq 2: TRANSITION data is malformed/],
    [
      'an instance that is no text',
      [{ type: LogType.TRANSITION, result: 0, data: { ...transition('disk', 'a', 'b', 'E').data, instance: 0 } }],
      /:seq 2: TRANSITION data is malformed/,
    ],
    [
      'a change of a key that is not there',
      [{ type: LogType.KEY_ATTRIBUTES_CHANGED, result: 0, data: { source: 200, kid: KIDS.aes, at: 1 } }],
      /:seq 2: key a{32} changed, but it does not exist/,
    ],
    [
      'a key record without a kid',
      [{ type: LogType.KEY_DELETE, result: 0, data: { source: 200 } }],
      /:seq 2: the key record names no kid/,
    ],
    [
      'a key of no known type',
      [{ type: LogType.KEY_GENERATION, result: 0, data: { source: 200, kid: KIDS.aes, type: 'RSA' } }],
      /:seq 2: the key record names no key type/,
    ],
    [
      'a mode the type cannot have',
      [
        {
          type: LogType.KEY_GENERATION,
          result: 0,
          data: { source: 200, kid: KIDS.aes, type: 'AES256', mode: 'ExDSA' },
        },
      ],
      /:seq 2: the key record's mode does not fit a AES256 key/,
    ],
    ['no variant', [ready], /: no file banner names the variant \(P or E\)/, '# hemd test {id}'],
  ]
  for (const [what, entries, message, banner] of cases) {
    const dir = t.testdir()
    const file = await oneFile(dir, [entries], banner)
    const answer = await run('replay', '--key', KEY, dir)
    t.equal(answer.code, 1, what)
    t.match(answer.stderr, `hem-audit replay: ${file}`, what)
    t.match(answer.stderr, message, what)
  }
  const dir = t.testdir()
  await oneFile(dir, [[transition('disk', 'unformatted', 'rw', 'UNLOCK_RW', '1')]])
  const files = await readSet(new FileJournalMedia(dir))
  const err = t.throws(() => replayDevice(files, signer.publicKey)) as JournalReplayError
  t.ok(err instanceof JournalReplayError)
  t.match(err, { file: /^[0-9a-f]{8}$/, seq: 2, detail: /UNLOCK_RW leads/, cause: { name: 'ReplayError' } })
})

t.test('banners that disagree on the variant are refused', async (t) => {
  const dir = t.testdir()
  const media = new FileJournalMedia(dir)
  const clock = fixedClock()
  for (const variant of ['P', 'E'] as const)
    await (await Journal.open(options(media, { clock }, deviceBanner(variant)))).close()
  const answer = await run('replay', '--key', KEY, dir)
  t.equal(answer.code, 1)
  t.match(answer.stderr, /6553f101\.log: the banner says variant E, but 6553f100 says P/)
})

t.test('E: no disks, personalised without formatting', async (t) => {
  const dir = t.testdir()
  await oneFile(
    dir,
    [
      [
        ...personalisedWithoutFormat({ user: 'Eve', email: 'eve@example.com' }),
        { ...transition('upgrade', 'idle', 'receiving', 'UPLOAD_STARTED', 'fw'), subject: 'U' },
      ],
    ],
    deviceBanner('E'),
  )
  const state = JSON.parse((await run('replay', '--json', '--key', KEY, dir)).stdout)
  t.notOk('disks' in state)
  t.match(state, {
    variant: 'E',
    personalisation: 'personalised',
    provisioning: 'unprovisioned',
    config: { user: 'Eve', iat: 5 },
    upgrades: { fw: 'receiving', ui: 'idle' },
    lifecycle: 'booting',
  })
  t.notOk('storage_mode' in state.config)
  const text = (await run('replay', '--key', KEY, dir)).stdout
  t.notMatch(text, /disks:/)
})

t.test('a wipeout erases the configuration and every key', async (t) => {
  const dir = t.testdir()
  await oneFile(
    dir,
    [
      [...personalisedWithoutFormat({ user: 'Eve' })],
      [
        {
          type: LogType.KEY_GENERATION,
          result: 0,
          subject: 'U',
          data: { source: 200, kid: KIDS.aes, type: 'SECP256K1' },
        },
      ],
      [
        { type: LogType.CONFIG_UPDATED, result: 0, subject: 'U', data: { source: 200, wipeout: true } },
        transition('personalisation', 'personalised', 'fresh', 'WIPEOUT'),
      ],
    ],
    deviceBanner('E'),
  )
  const files = await readSet(new FileJournalMedia(dir))
  t.match(
    replayDevice(files, signer.publicKey, { at: { file: files[0]!.id, seq: 4 } }).keys,
    { [KIDS.aes]: { type: 'ATT,PKEY,ECDH,SECP256K1' } },
    'an ec key without a recorded mode has the default, ECDH',
  )
  t.same(replayDevice(files, signer.publicKey), {
    ...replayDevice(files, signer.publicKey),
    personalisation: 'fresh',
    config: factoryConfig('E'),
    keys: {},
  })
})

t.test('usage', async (t) => {
  const help = await run('replay', '--help')
  t.equal(help.code, 0)
  t.match(
    help.stdout,
    /^Usage: hem-audit replay \[--key BASE64 \| --key-file FILE\] \[--allow-open\] \[--head FILE\] \[--at POINT\]/,
  )
  t.match(help.stdout, /FILEID:SEQ/)
  const none = await run('replay', '--key', KEY)
  t.equal(none.code, 2)
  t.match(none.stderr, /^hem-audit replay: no files given\n\nUsage: hem-audit replay/)
  t.equal((await run('replay', '--frob', '--key', KEY, '.')).code, 2)
})
