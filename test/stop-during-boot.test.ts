// Ctrl-C while the device is still starting (its journal open, its gateway perhaps answering, its
// banner not yet printed) stops it cleanly once the start is over: exit 0 and every journal file
// sealed. Node's default for a signal nobody listens to would kill the runtime with its file open.
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { LogType } from '../protocol/journal.js'
import { auditBin, runHemd, runToEnd, spawnHemd } from './helpers/hemd-process.js'
import { readJournal } from './helpers/journal.js'
import { until } from './helpers/until.js'

const journalFiles = async (data: string) =>
  (await readdir(join(data, 'journal')).catch(() => [])).filter((n) => n.endsWith('.log')).length

t.test('a signal during the start is a clean stop after it', async (t) => {
  const data = join(t.testdir({ data: {} }), 'data')
  const first = await runHemd(t, ['--data', data])
  t.equal(await first.interrupt(), 0, 'the first boot stops cleanly')
  const before = await journalFiles(data)

  const second = spawnHemd(t, ['--data', data])
  await until('the second boot opened its journal file', async () => (await journalFiles(data)) > before, 60_000)
  t.notMatch(second.stdout(), /Ctrl-C stops/, 'interrupted before its banner')
  t.equal(await second.interrupt(), 0, second.stderr())
  t.match(second.stdout(), /stopped \(journal sealed\)/)

  const startups = (await readJournal(data)).records.filter((r) => r.type === LogType.STARTUP)
  t.equal(startups.length, 2, 'the interrupted boot journaled its start')
  const audit = await runToEnd(auditBin, ['verify', '--key', first.logKey, join(data, 'journal')])
  t.equal(audit.code, 0, audit.stdout + audit.stderr)
})
