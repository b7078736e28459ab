import { ed25519 } from '@noble/curves/ed25519.js'
import { spawnSync } from 'node:child_process'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { main } from '../cli/hem-audit/audit-cli.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { Journal } from '../eventstore/index.js'
import { LogType } from '../protocol/journal.js'
import { START, fixedClock, options, signedHeadOf, signer, writeDeviceJournal } from './helpers/journal-fixtures.js'
import { runCli } from './helpers/cli-output.js'

const KEY = Buffer.from(signer.publicKey).toString('base64')

/** Two closed files in `dir`; returns their ids. */
async function writeJournal(dir: string): Promise<string[]> {
  const media = new FileJournalMedia(dir)
  const clock = fixedClock()
  for (let boot = 0; boot < 2; boot++) {
    const journal = await Journal.open(options(media, { clock }))
    await journal.append([
      { type: LogType.STARTUP, result: 0 },
      { type: LogType.CRYPTO_ENCRYPT, result: 0, subject: 'U', data: { source: 200 } },
    ])
    await journal.close()
  }
  return media.list()
}

const run = (...argv: string[]) => runCli(main, argv)

/** The installed command in a process of its own, `input` on its stdin. */
const runProcess = (argv: string[], input: string | Buffer) =>
  spawnSync(process.execPath, [fileURLToPath(new URL('../dist/bin/hem-audit.js', import.meta.url)), ...argv], {
    input,
    encoding: 'utf8',
  })

t.test('verify a good directory', async (t) => {
  const dir = t.testdir()
  const ids = await writeJournal(dir)
  const result = await run('verify', '--key', KEY, dir)
  const at = new Date(START).toISOString()
  t.same(result, {
    code: 0,
    stderr: '',
    stdout:
      `files: 2, records: 10, seals: 2\nfirst record: ${at}, last record: ${at}\nboots: 2\n` +
      `  boot 1: ${ids[0]}, ${at} to ${at}, closed\n  boot 2: ${ids[1]}, ${at} to ${at}, closed\nOK\n`,
  })
  const urlSafe = Buffer.from(signer.publicKey).toString('base64url')
  t.equal(
    (await run('verify', `--key=${urlSafe}`, join(dir, `${ids[1]}.log`), join(dir, `${ids[0]}.log`))).code,
    0,
    'files in any order',
  )

  const json = await run('verify', '--json', '--key', KEY, dir)
  t.equal(json.code, 0)
  t.match(JSON.parse(json.stdout), {
    ok: true,
    problems: [],
    summary: {
      files: 2,
      records: 10,
      seals: 2,
      firstTimeIso: at,
      gaps: [],
      boots: [{ files: [ids[0]], end: 'close', firstTimeIso: at }, { files: [ids[1]] }],
    },
  })

  await writeFile(join(dir, 'key.b64'), `${KEY}\n`)
  await writeFile(join(dir, 'key.raw'), signer.publicKey)
  t.equal((await run('verify', '--key-file', join(dir, 'key.b64'), dir)).code, 0, 'base64 key file')
  t.equal((await run('verify', '--key-file', join(dir, 'key.raw'), dir)).code, 0, 'raw key file')
})

t.test('verify a tampered directory', async (t) => {
  const dir = t.testdir()
  const ids = await writeJournal(dir)
  const path = join(dir, `${ids[0]}.log`)
  const lines = (await readFile(path, 'utf8')).split('\n')
  lines[4] = lines[4]!.replace('|24|0|U|', '|24|1|U|')
  await writeFile(path, lines.join('\n'))
  const result = await run('verify', '--key', KEY, dir)
  t.equal(result.code, 1)
  t.match(result.stdout, `\n${path}:seq 3: MAC does not match\n`)
  t.match(result.stdout, /\nFAILED: \d+ problem\(s\)\n$/)
  const json = JSON.parse((await run('verify', '--json', '--key', KEY, dir)).stdout)
  t.match(json.problems[0], { file: ids[0], seq: 3, line: 5, path, message: 'MAC does not match' })

  const other = Buffer.from(ed25519.getPublicKey(new Uint8Array(32).fill(1))).toString('base64')
  t.equal((await run('verify', '--key', other, dir)).code, 1, 'the wrong key fails')
})

t.test('an open newest file needs --allow-open, and its unsealed records a signed head', async (t) => {
  const dir = t.testdir()
  const ids = await writeJournal(dir)
  const path = join(dir, `${ids[1]}.log`)
  const lines = (await readFile(path, 'utf8')).split('\n')
  await writeFile(path, lines.slice(0, -2).concat('').join('\n'))
  const strict = await run('verify', '--key', KEY, dir)
  t.equal(strict.code, 1)
  t.match(strict.stdout, `${path}:seq 3: file ends with 4 unsealed record(s)`)
  const open = await run('verify', '--allow-open', '--key', KEY, dir)
  t.equal(open.code, 1)
  t.match(open.stdout, `open: ${path} ends with 4 unsealed record(s)\n`)
  t.match(open.stdout, `${path}:seq 0: unverified: no seal or signed head covers this record`)
  const head = join(dir, 'head.json')
  await writeFile(head, JSON.stringify(await signedHeadOf(new FileJournalMedia(dir))))
  const covered = await run('verify', '--allow-open', '--head', head, '--key', KEY, dir)
  t.equal(covered.code, 0)
  t.match(covered.stdout, `open: ${path} ends with 4 unsealed record(s)\nOK\n`)

  // As an auditor pipes GET /api/logger/key into it: the head from stdin, through the installed command.
  const args = ['verify', '--allow-open', '--head', '-', '--key', KEY, dir]
  const piped = runProcess(args, await readFile(head))
  t.equal(piped.status, 0, piped.stderr)
  t.match(piped.stdout, /\nOK\n$/)
  const empty = runProcess(args, '')
  t.equal(empty.status, 2)
  t.match(empty.stderr, /^hem-audit verify: --head stdin is not a signed head \{file, seq, head, sig\}: /)

  // A head of a file that is not given: its problem names the file as the head does.
  await rm(path)
  const json = JSON.parse((await run('verify', '--json', '--allow-open', '--head', head, '--key', KEY, dir)).stdout)
  t.match(json.problems.at(-1), { file: ids[1], path: ids[1], message: /the signed head of .*head\.json/ })
})

t.test('files without a record show no times', async (t) => {
  const dir = t.testdir({ '00000001.log': '' })
  const text = await run('verify', '--key', KEY, dir)
  t.equal(text.code, 1)
  t.match(text.stdout, /^files: 1, records: 0, seals: 0\nfirst record: -, last record: -\n/)
  t.match(text.stdout, `${join(dir, '00000001.log')}:line 1: file has no records`)
  const json = JSON.parse((await run('verify', '--json', '--key', KEY, dir)).stdout)
  t.match(json.summary, { records: 0, firstTimeIso: null, lastTimeIso: null })
})

t.test('usage', async (t) => {
  const dir = t.testdir({ empty: {}, 'short.key': 'AAAA' })
  const help = await run('--help')
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: hem-audit COMMAND/)
  for (const command of ['verify', 'replay', 'timeline', 'fetch'])
    t.match(help.stdout, new RegExp(`\\n {2}${command} +[a-z]`))
  const verifyHelp = await run('verify', '--help')
  t.equal(verifyHelp.code, 0)
  t.match(verifyHelp.stdout, /^Usage: hem-audit verify \[--key BASE64 \| --key-file FILE\]/)

  const cases: [string[], RegExp][] = [
    [[], /^hem-audit: no command given\n\nUsage: hem-audit COMMAND/],
    [['frobnicate'], /^hem-audit: unknown command 'frobnicate'/],
    [['verify', dir], /^hem-audit verify: the log public key is needed/],
    [['verify', '--key', KEY, '--key-file', 'x', dir], /not both/],
    [['verify', '--key', 'AAAA', dir], /--key is not a base64 Ed25519 public key/],
    [['verify', '--key', 'not base64!', dir], /--key is not a base64 Ed25519 public key/],
    [['verify', '--key', KEY, '--head', join(dir, 'head.json'), dir], /cannot read --head .*head\.json: ENOENT/],
    [['verify', '--key-file', join(dir, 'short.key'), dir], /holds neither a base64 key nor 32 raw bytes/],
    [['verify', '--key-file', join(dir, 'missing.key'), dir], /cannot read key file/],
    [['verify', '--key', KEY], /no files given/],
    [['verify', '--key', KEY, join(dir, 'nothere')], /cannot read .*nothere/],
    [['verify', '--key', KEY, join(dir, 'empty')], /no \*\.log files in/],
    [['verify', '--frob', '--key', KEY, dir], /Unknown option '--frob'/],
    [
      ['fetch', '--url', 'http://127.0.0.1:9'],
      /no passphrase: set HEM_PASSPHRASE, give a passphrase file, or run on a terminal/,
    ],
  ]
  for (const [argv, message] of cases) {
    const result = await run(...argv)
    t.equal(result.code, 2, argv.join(' '))
    t.equal(result.stdout, '')
    t.match(result.stderr, message)
    if (argv[0] === 'verify') t.match(result.stderr, /\n\nUsage: hem-audit verify/)
  }
})

t.test('verify tells the boots (rotated files, a crash) and the gaps in the files', async (t) => {
  const dir = t.testdir()
  const { boots } = await writeDeviceJournal(dir)
  const [[first], second, [third]] = boots as [[string], string[], [string]]
  const text = (await run('verify', '--key', KEY, dir)).stdout
  t.match(text, /\nboots: 3\n {2}boot 1: 6553f100, \S+ to \S+, closed\n/)
  t.match(text, `\n  boot 2: ${second[0]}..${second.at(-1)} (${second.length} files), `)
  t.match(text, /, crashed \(sealed as recovered at the next boot\)\n {2}boot 3: /)
  t.notMatch(text, /gap:/)

  await rm(join(dir, `${first}.log`))
  t.equal((await run('verify', '--key', KEY, dir)).code, 1, 'older files missing are a problem')
  const older = await run('verify', '--allow-missing-start', '--key', KEY, dir)
  t.equal(older.code, 0, 'unless the auditor allows it')
  t.match(
    older.stdout,
    `\ngap: ${join(dir, `${second[0]}.log`)} links to ${first}, ` +
      'which is not among the files given: older files are missing\n',
  )
  t.match(JSON.parse((await run('verify', '--json', '--allow-missing-start', '--key', KEY, dir)).stdout).summary.gaps, [
    { file: second[0], missing: first, atStart: true },
  ])

  await rm(join(dir, `${second[3]}.log`))
  const between = await run('verify', '--allow-missing-start', '--key', KEY, dir)
  t.equal(between.code, 1, 'files missing between others are, always')
  t.match(
    between.stdout,
    `\ngap: ${join(dir, `${second[4]}.log`)} links to ${second[3]}, ` +
      'which is not among the files given: files between are missing\n',
  )
  t.match(between.stdout, `${join(dir, `${second[4]}.log`)}:seq 1: LINK names previous file ${second[3]}`)
  t.match(
    between.stdout,
    `\nboots: 3\n  boot 1: ${second[0]}..${second[2]} (3 files), `,
    'what follows a gap cannot be told to be the same boot',
  )
  t.match(between.stdout, `\n  boot 2: ${second[4]}..${second.at(-1)} `)
  t.match(between.stdout, `\n  boot 3: ${third}, `)
})
