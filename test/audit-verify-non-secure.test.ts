// hem-audit verify (and hemctl logs verify, which runs it) on files that verify but hold the device's
// records of a fail state it raised (issue 35 item 3): one line per record, its own last line and exit 6.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../cli/hem-audit/audit-cli.js'
import { main as hemctl } from '../cli/hemctl/cli.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { Journal } from '../eventstore/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { START, fixedClock, options, signer } from './helpers/journal-fixtures.js'
import { runCli } from './helpers/cli-output.js'

const KEY = Buffer.from(signer.publicKey).toString('base64')
const at = new Date(START).toISOString()

/** One closed file: a tamper found by the journal, a temperature raised and cleared. */
async function writeJournal(dir: string): Promise<string> {
  const journal = await Journal.open(options(new FileJournalMedia(dir), { clock: fixedClock() }))
  const [tamper] = await journal.append([
    { type: LogType.NON_SECURE_STATE, result: LogResult.ERROR, data: { fls: 8, raised: 8, source: 'journal' } },
    { type: LogType.STARTUP, result: LogResult.ERROR, data: { fls: 8 } },
    { type: LogType.NON_SECURE_STATE, result: LogResult.ERROR, data: { fls: 12, raised: 4, source: 'sensor' } },
    { type: LogType.NON_SECURE_STATE, result: LogResult.OK, data: { fls: 8, cleared: 4, source: 'sensor' } },
  ])
  await journal.close()
  return `${tamper!.file}:seq ${tamper!.seq.toString(16)}`
}

t.test('verify tells each fail state raised, ends with its own line and exits 6', async (t) => {
  const dir = t.testdir()
  const where = await writeJournal(dir)
  const result = await runCli(main, ['verify', '--key', KEY, dir])
  t.equal(result.code, 6, 'verified, but a non-secure state was recorded')
  const lines = result.stdout.trimEnd().split('\n')
  const told = lines.filter((line) => line.startsWith('non-secure state: '))
  t.same(told, [
    `non-secure state: ${join(dir, where.replace(':', '.log:'))} at ${at}: ` +
      'raised 0x08 (fls_state 0x08), source journal',
    told[1],
  ])
  t.match(told[1], /:seq [0-9a-f]+ at .*: raised 0x04 \(fls_state 0x0c\), source sensor$/, 'a cleared bit is not told')
  t.equal(lines.at(-1), 'OK, with 2 non-secure state record(s)')

  const json = await runCli(main, ['verify', '--json', '--key', KEY, dir])
  t.equal(json.code, 6)
  const parsed = JSON.parse(json.stdout) as { ok: boolean; summary: { nonSecure: unknown[] } }
  t.equal(parsed.ok, true, 'the files verify')
  t.match(parsed.summary.nonSecure, [{ raised: 8, fls: 8, source: 'journal', timeIso: at }, { raised: 4 }])
})

t.test('hemctl logs verify DIR exits 6 too; a journal without such records still exits 0', async (t) => {
  const root = t.testdir({ tampered: {}, clean: {} })
  await writeJournal(join(root, 'tampered'))
  await writeFile(join(root, 'tampered', 'log-key.b64'), KEY)
  const clean = await Journal.open(options(new FileJournalMedia(join(root, 'clean')), { clock: fixedClock() }))
  await clean.append([{ type: LogType.STARTUP, result: LogResult.OK }])
  await clean.close()
  await writeFile(join(root, 'clean', 'log-key.b64'), KEY)
  const io = () => {
    const out = { stdout: '', stderr: '' }
    return {
      out,
      io: {
        stdout: { write: (text: string) => (out.stdout += text) },
        stderr: { write: (text: string) => (out.stderr += text) },
        env: { XDG_CONFIG_HOME: root },
        askSecret: async () => undefined,
        stdin: (async function* () {})(),
        stderrIsTTY: false,
      },
    }
  }
  const tampered = io()
  t.equal(await hemctl(['logs', 'verify', join(root, 'tampered')], tampered.io), 6, tampered.out.stderr)
  t.match(tampered.out.stdout, /\nOK, with 2 non-secure state record\(s\)\n$/)
  const whole = io()
  t.equal(await hemctl(['logs', 'verify', join(root, 'clean')], whole.io), 0, whole.out.stderr)
  t.match(whole.out.stdout, /\nOK\n$/)
})
