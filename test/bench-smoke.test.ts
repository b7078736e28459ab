// `npm run bench` run once with tiny settings, so that the harness cannot rot between full runs.
// It checks that every scenario really loaded its server with good requests, not the numbers:
// speed targets are met in the full benchmark, never in timed tests.
import t from 'tap'
import { distDir } from './helpers/device.js'
import { runToEnd } from './helpers/hemd-process.js'

const bench = `${distDir}/bench/run.js`
const SCENARIOS = ['a', 'b', 'c', 'd-bare', 'd-hemd']
const TARGETS = [
  'encrypt req/s / bare ceiling (a)',
  'encrypt req/s / bus ceiling (b)',
  'encrypt p99 / bare ceiling (a) p99',
  'status req/s / bare GET',
  'hemd peak RSS (VmHWM)',
]

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

t.test('one tiny run: every scenario answered 2xx only, and the report has every target line', async (t) => {
  const run = await runToEnd(bench, ['--duration', '1', '--connections', '2', '--rounds', '1'])
  t.equal(run.code, 0, `exit code (stderr: ${run.stderr})`)
  for (const id of SCENARIOS) {
    // id, req/s, p50, p99, 2xx, errors, non-2xx, title
    const row = new RegExp(`^${escape(id)}\\s+\\d+\\s+[\\d.]+\\s+[\\d.]+\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s`, 'm').exec(run.stdout)
    if (!row) {
      t.fail(`no report line for ${id}`, { stdout: run.stdout })
      continue
    }
    t.ok(Number(row[1]) > 0, `${id}: requests answered 2xx`)
    t.equal(Number(row[2]), 0, `${id}: no errors`)
    t.equal(Number(row[3]), 0, `${id}: no non-2xx answers`)
  }
  for (const label of TARGETS) t.match(run.stdout, new RegExp(`^  ${escape(label)} .*(PASS|MISS)$`, 'm'), label)
  t.match(run.stdout, /^machine: \d+ cpus .*node v\d+/m)
})

t.test('a bad flag is a usage error, before anything starts', async (t) => {
  const run = await runToEnd(bench, ['--rounds', '0'])
  t.equal(run.code, 2)
  t.match(run.stderr, /--rounds wants a positive integer/)
})
