import { ed25519 } from '@noble/curves/ed25519.js'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../eventstore/audit-cli.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { Journal, LogType } from '../eventstore/index.js'
import { START, fixedClock, options, signer } from './helpers/journal-fixtures.js'

const KEY = Buffer.from(signer.publicKey).toString('base64')

/** Two closed files in `dir`; returns their ids. */
async function writeJournal(dir: string): Promise<string[]> {
  const media = new FileJournalMedia(dir)
  const clock = fixedClock()
  for (let boot = 0; boot < 2; boot++) {
    const journal = await Journal.open(options(media, { clock }))
    await journal.append([{ type: LogType.STARTUP, result: 0 }, { type: LogType.CRYPTO_ENCRYPT, result: 0, subject: 'U', data: { source: 200 } }])
    await journal.close()
  }
  return media.list()
}

async function run(...argv: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } })
  return { code, stdout, stderr }
}

t.test('verify a good directory', async (t) => {
  const dir = t.testdir()
  const ids = await writeJournal(dir)
  const result = await run('verify', '--key', KEY, dir)
  t.same(result, {
    code: 0, stderr: '',
    stdout: `files: 2, records: 10, seals: 2\nfirst record: ${new Date(START).toISOString()}, last record: ${new Date(START).toISOString()}\nOK\n`,
  })
  const urlSafe = Buffer.from(signer.publicKey).toString('base64url')
  t.equal((await run('verify', `--key=${urlSafe}`, join(dir, `${ids[1]}.log`), join(dir, `${ids[0]}.log`))).code, 0, 'files in any order')

  const json = await run('verify', '--json', '--key', KEY, dir)
  t.equal(json.code, 0)
  t.match(JSON.parse(json.stdout), { ok: true, problems: [], summary: { files: 2, records: 10, seals: 2, firstTimeIso: new Date(START).toISOString() } })

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

t.test('an open newest file needs --allow-open', async (t) => {
  const dir = t.testdir()
  const ids = await writeJournal(dir)
  const path = join(dir, `${ids[1]}.log`)
  const lines = (await readFile(path, 'utf8')).split('\n')
  await writeFile(path, lines.slice(0, -2).concat('').join('\n'))
  const strict = await run('verify', '--key', KEY, dir)
  t.equal(strict.code, 1)
  t.match(strict.stdout, `${path}:seq 3: file ends with 4 unsealed record(s)`)
  const open = await run('verify', '--allow-open', '--key', KEY, dir)
  t.equal(open.code, 0)
  t.match(open.stdout, `open: ${path} ends with 4 unsealed record(s)\nOK\n`)
})

t.test('usage', async (t) => {
  const dir = t.testdir({ 'empty': {}, 'short.key': 'AAAA' })
  const help = await run('--help')
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: hem-audit COMMAND/)
  t.match(help.stdout, /\n {2}verify {2}check signatures/)
  const verifyHelp = await run('verify', '--help')
  t.equal(verifyHelp.code, 0)
  t.match(verifyHelp.stdout, /^Usage: hem-audit verify \[--key BASE64 \| --key-file FILE\]/)

  const cases: [string[], RegExp][] = [
    [[], /^hem-audit: no command given\n\nUsage: hem-audit COMMAND/],
    [['frobnicate'], /^hem-audit: unknown command 'frobnicate'/],
    [['verify', dir], /^hem-audit verify: the log public key is needed/],
    [['verify', '--key', KEY, '--key-file', 'x', dir], /not both/],
    [['verify', '--key', 'AAAA', dir], /--key is not a base64 Ed25519 public key/],
    [['verify', '--key-file', join(dir, 'short.key'), dir], /holds neither a base64 key nor 32 raw bytes/],
    [['verify', '--key-file', join(dir, 'missing.key'), dir], /cannot read key file/],
    [['verify', '--key', KEY], /no files given/],
    [['verify', '--key', KEY, join(dir, 'nothere')], /cannot read .*nothere/],
    [['verify', '--key', KEY, join(dir, 'empty')], /no \*\.log files in/],
    [['verify', '--frob', '--key', KEY, dir], /Unknown option '--frob'/],
  ]
  for (const [argv, message] of cases) {
    const result = await run(...argv)
    t.equal(result.code, 2, argv.join(' '))
    t.equal(result.stdout, '')
    t.match(result.stderr, message)
    if (argv[0] === 'verify') t.match(result.stderr, /\n\nUsage: hem-audit verify/)
  }
})
