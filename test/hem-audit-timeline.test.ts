// hem-audit timeline: the device's story, one line per record, from verified files only.
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../cli/hem-audit/audit-cli.js'
import { Journal } from '../eventstore/index.js'
import { LogType } from '../protocol/journal.js'
import { readAuditJournal, timeline } from '../audit/index.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { fixedClock, KIDS, options, readSet, records, signer, writeDeviceJournal } from './helpers/journal-fixtures.js'
import { runCli } from './helpers/cli-output.js'

const KEY = Buffer.from(signer.publicKey).toString('base64')

const run = (...argv: string[]) => runCli(main, argv)

const lines = (text: string) => text.split('\n').filter((line) => line !== '')
/** Columns are padded: compare their content. */
const squeeze = (text: string) => text.replace(/ +/g, ' ')

t.test('one line per event: time, position, who, what, result, facts', async (t) => {
  const dir = t.testdir()
  const { boots } = await writeDeviceJournal(dir)
  const answer = await run('timeline', '--key', KEY, dir)
  t.equal(answer.code, 0)
  t.equal(answer.stderr, '')
  const story = lines(answer.stdout)
  t.equal(story.length, 33, 'every record but the plumbing (file keys, links, seals)')
  t.equal(
    story[0],
    '2023-11-14T22:13:20Z  6553f100:2     device   startup                             ' +
      'OK          slot=A fwv=1.0.0 fls=0x00',
  )
  t.equal(
    story[5],
    '2023-11-14T22:13:40Z  6553f100:7     master   device personalised                 ' +
      'OK 200      rid=r2 instanceid=ffffffffffffffffffffffffffffffff',
  )
  const told = squeeze(answer.stdout)
  t.match(told, '\n2023-11-14T22:13:40Z 6553f100:a device transition disk 0 locked → rw by UNLOCK_RW OK\n')
  t.match(
    answer.stdout,
    '\n2023-11-14T22:13:50Z  6553f100:d     user     key generated                       ' +
      `OK 200      kid=${KIDS.aes} type=AES256 rid=r4\n`,
  )
  t.match(told, ' 6553f100:f user scope check failed FAILED 403 scope=storage:disk1 rid=r6\n')
  t.match(
    told,
    ' 6553f100:12 device fail state changed ERROR source=sensor temp=90 min=-40 max=85 fls=0x04 raised=0x04\n',
  )
  t.match(told, ' user config updated OK 200 rid=r8 uts=1700000160 changed=user\n')
  t.match(told, ` user key generated ERROR 507 kid=${KIDS.undone} type=ED25519 rid=rb\n`)
  t.notMatch(answer.stdout, /Ada|ada@example/, 'which fields changed, not what they hold')
  t.match(story.at(-1), `${boots[2]![0]}:4 `)

  const all = lines((await run('timeline', '--all', '--key', KEY, dir)).stdout)
  t.equal(all.length, 33 + 3 * boots.flat().length, 'with --all, KEY_INIT, LINK and a seal in every file')
  t.match(squeeze(all[0]!), / 6553f100:0 device file key OK$/)
  t.match(squeeze(all[1]!), / 6553f100:1 device file linked OK$/, 'the first file links to nothing')
  t.match(squeeze(all.join('\n')), / sealed OK reason=close head=[0-9a-f]{16}…\n/)
  t.match(squeeze(all.join('\n')), ' file linked OK prev=6553f100 seq=15\n')
  const fileKey = records(await readFile(join(dir, '6553f100.log')))[0]!.subject
  t.notMatch(all.join('\n'), fileKey, 'the file key is never shown')
})

t.test('filters: type, subject, time; --json prints JSON Lines', async (t) => {
  const dir = t.testdir()
  const { start } = await writeDeviceJournal(dir)
  const of = async (...args: string[]) => {
    const answer = await run('timeline', '--key', KEY, ...args, dir)
    t.equal(answer.code, 0, args.join(' '))
    return lines(answer.stdout)
  }
  const generated = await of('--type', 'KEY_GENERATION')
  t.equal(generated.length, 3)
  t.ok(generated.every((line) => line.includes(' key generated ')))
  t.same(await of('--type', '20'), generated, 'by number')
  t.same(await of('--type', 'key_generation'), generated, 'any case')
  t.equal((await of('--type', '0x14', '--type', 'KEY_DELETE')).length, 4, 'several types: any of them')
  t.equal((await of('--type', 'SEAL')).length, 11, 'plumbing asked for by type is shown')
  t.same(await of('--subject', 'M'), await of('--type', 'DEVICE_INITED'))
  t.ok(
    (await of('--subject', '')).every((line) => squeeze(line).includes(' device ')),
    "'' is the device's own",
  )
  const window = await of('--since', String(start + 30), '--until', '2023-11-14T22:14:00Z')
  t.equal(window.length, 7)
  t.ok(window.every((line) => /^2023-11-14T22:1(3:50|4:00)Z/.test(line)))

  const json = await run('timeline', '--json', '--type', 'KEY_GENERATION', '--subject', 'U', '--key', KEY, dir)
  const events = lines(json.stdout).map((line) => JSON.parse(line))
  t.equal(events.length, 3)
  t.same(events[0], {
    time: start + 30,
    iso: '2023-11-14T22:13:50.000Z',
    file: '6553f100',
    seq: 13,
    type: LogType.KEY_GENERATION,
    name: 'KEY_GENERATION',
    what: 'key generated',
    subject: 'U',
    result: 'OK',
    status: 200,
    facts: { kid: KIDS.aes, type: 'AES256', rid: 'r4' },
  })
  t.match(events[2], { result: 'ERROR', status: 507 })
  const transitions = lines((await run('timeline', '--json', '--type', 'TRANSITION', '--key', KEY, dir)).stdout).map(
    (line) => JSON.parse(line),
  )
  t.match(transitions[0], {
    name: 'TRANSITION',
    what: 'transition lifecycle booting → running by READY',
    subject: '',
    result: 'OK',
    facts: {},
  })
  t.notOk('status' in transitions[0])
})

t.test('data this tool does not know is never printed; text is made printable', async (t) => {
  const dir = t.testdir()
  const media = new FileJournalMedia(dir)
  const journal = await Journal.open(options(media, { clock: fixedClock() }))
  await journal.append([
    {
      type: LogType.CRYPTO_ENCRYPT,
      result: 0,
      subject: 'U',
      data: { source: 200, kid: KIDS.aes, plaintext: 'not-for-your-eyes', blob: new Uint8Array([1, 2, 3]) },
    },
    {
      type: 0x99,
      result: 2,
      subject: 'ext\u001b[31m',
      data: { source: 'somewhere', rid: `x\u0007${'y'.repeat(100)}` },
    },
    { type: LogType.SELFTEST_PASSED, result: 1, data: { source: 200, failed: ['AES-GCM', 'SHA-256'], entropy: 'rct' } },
    { type: LogType.TRANSITION, result: 0, data: { machine: 'disk' } },
  ])
  await journal.close()
  const out = (await run('timeline', '--key', KEY, dir)).stdout
  const story = squeeze(out)
  t.notMatch(out, /not-for-your-eyes|plaintext|blob/)
  t.match(story, ` user encrypted OK 200 kid=${KIDS.aes}\n`)
  t.match(story, / ext\?\[31m type 0x99 ERROR source=somewhere rid=x\?y{78}…\n/)
  t.notMatch(out, /[\u0000-\u0009\u000b-\u001f]/)
  t.match(story, ' device self-test FAILED 200 entropy=rct failed=AES-GCM,SHA-256\n')
  t.match(story, ' device transition (malformed data) OK\n')
  const json = lines((await run('timeline', '--json', '--key', KEY, dir)).stdout).map((line) => JSON.parse(line))
  t.match(json[1], { name: '0x99', what: 'type 0x99', result: 'ERROR', facts: { source: 'somewhere' } })
  t.notOk('status' in json[1])

  const files = await readSet(media)
  t.equal(timeline(readAuditJournal(files, signer.publicKey).records, { types: [LogType.CRYPTO_ENCRYPT] }).length, 1)
})

t.test('tampered files are refused', async (t) => {
  const dir = t.testdir()
  await writeDeviceJournal(dir)
  const path = join(dir, '6553f100.log')
  await writeFile(path, (await readFile(path, 'utf8')).replace('|1|U|', '|1|M|'))
  const answer = await run('timeline', '--key', KEY, dir)
  t.equal(answer.code, 1)
  t.equal(answer.stdout, '')
  t.match(
    answer.stderr,
    `hem-audit timeline: the files do not verify; nothing in them is replayed:\n  ${path}:seq f: MAC does not match`,
  )
})

t.test('usage', async (t) => {
  const help = await run('timeline', '--help')
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: hem-audit timeline /)
  const cases: [string[], RegExp][] = [
    [['--type', 'NOPE'], /--type: 'NOPE' is no log type name or number/],
    [['--type', '0x10000'], /--type: '0x10000' is no log type/],
    [['--since', 'last week'], /--since: 'last week' is neither Unix seconds nor an ISO 8601/],
    [['--until', '2024-01-01T00:00'], /--until: /],
  ]
  for (const [args, message] of cases) {
    const answer = await run('timeline', '--key', KEY, ...args, '.')
    t.equal(answer.code, 2, args.join(' '))
    t.match(answer.stderr, message)
  }
})
