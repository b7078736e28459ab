// Missing oldest files are a problem for `hem-audit verify` (issue 22, item 4), unless the auditor
// says --allow-missing-start; then verify shows the journal's record of the owner's deletion.
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../cli/hem-audit/audit-cli.js'
import { FileJournalMedia } from '../hal/sim/journal-media.js'
import { Journal } from '../eventstore/index.js'
import { LogType, type JournalEntry } from '../protocol/journal.js'
import { runCli } from './helpers/cli-output.js'
import { fixedClock, options, signer } from './helpers/journal-fixtures.js'

const KEY = Buffer.from(signer.publicKey).toString('base64')
const run = (...argv: string[]) => runCli(main, argv)

/** Three closed files, one per boot; the last one also holds `deletions(first file's id)`. */
async function writeJournal(dir: string, deletions: (first: string) => JournalEntry[] = () => []): Promise<string[]> {
  const media = new FileJournalMedia(dir)
  const clock = fixedClock()
  for (let boot = 0; boot < 3; boot++) {
    const journal = await Journal.open(options(media, { clock }))
    await journal.append([{ type: LogType.STARTUP, result: 0 }])
    if (boot === 2) await journal.append(deletions((await media.list())[0]!))
    await journal.close()
  }
  return media.list()
}

/** The record of the owner deleting file `id`. */
const deletion = (id: string): JournalEntry[] => [
  { type: LogType.LOGGER_DELETE_LOG, result: 0, subject: 'U', data: { source: 200, rid: 'r9', id } },
]

t.test('a journal missing its oldest file fails verify unless --allow-missing-start', async (t) => {
  const dir = t.testdir()
  const ids = await writeJournal(dir)
  await rm(join(dir, `${ids[0]}.log`))
  const strict = await run('verify', '--key', KEY, dir)
  t.equal(strict.code, 1)
  t.match(strict.stdout, `${join(dir, `${ids[1]}.log`)}:seq 1: LINK names previous file ${ids[0]}, which is not given`)
  const json = JSON.parse((await run('verify', '--json', '--key', KEY, dir)).stdout)
  t.match(json, { ok: false, summary: { gaps: [{ file: ids[1], missing: ids[0], atStart: true }] } })

  const allowed = await run('verify', '--allow-missing-start', '--key', KEY, dir)
  t.equal(allowed.code, 0, allowed.stdout)
  t.match(allowed.stdout, 'older files are missing')
  t.match(allowed.stdout, 'deleted by the owner: no record of it in these files')
  t.equal((await run('replay', '--allow-missing-start', '--key', KEY, dir)).code, 1, 'a replay still needs them')
})

t.test("with --allow-missing-start, verify shows the journal's record of the owner's deletion", async (t) => {
  const dir = t.testdir()
  const ids = await writeJournal(dir, deletion)
  await rm(join(dir, `${ids[0]}.log`))
  const allowed = await run('verify', '--allow-missing-start', '--key', KEY, dir)
  t.equal(allowed.code, 0, allowed.stdout)
  t.match(allowed.stdout, `deleted by the owner: log file ${ids[0]}, by U at `)
  t.match(allowed.stdout, `(${join(dir, `${ids[2]}.log`)}:seq 3)`)
  const json = JSON.parse((await run('verify', '--json', '--allow-missing-start', '--key', KEY, dir)).stdout)
  t.match(json.summary.deletions, [{ file: ids[2], seq: 3, subject: 'U', deleted: ids[0] }])
})

t.test('a gap between files stays a problem', async (t) => {
  const dir = t.testdir()
  const ids = await writeJournal(dir)
  await rm(join(dir, `${ids[1]}.log`))
  const result = await run('verify', '--allow-missing-start', '--key', KEY, dir)
  t.equal(result.code, 1)
  t.match(result.stdout, `LINK names previous file ${ids[1]}, but the file before it in the set is ${ids[0]}`)
})

t.test('a deletion that names no file, by the device itself, or that failed, is told as the record says', async (t) => {
  const dir = t.testdir()
  const ids = await writeJournal(dir, () => [
    { type: LogType.LOGGER_DELETE_LOG, result: 0, subject: '', data: { source: 200, rid: 'ra' } },
    { type: LogType.LOGGER_DELETE_LOG, result: 0, subject: 'U', data: { source: 200, rid: 'rb', id: 7 } },
    { type: LogType.LOGGER_DELETE_LOG, result: 1, subject: 'U', data: { source: 409, rid: 'rc', id: 'x' } },
  ])
  await rm(join(dir, `${ids[0]}.log`))
  const allowed = await run('verify', '--allow-missing-start', '--key', KEY, dir)
  t.equal(allowed.code, 0, allowed.stdout)
  const told = allowed.stdout.split('\n').filter((line) => line.startsWith('deleted by the owner'))
  t.match(told, [/^deleted by the owner: log files, by the device at /, /^deleted by the owner: log files, by U at /])
  t.equal(told.length, 2, 'a failed deletion deleted nothing')
})
