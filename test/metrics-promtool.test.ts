// The exposition passes Prometheus's own linter, `promtool check metrics` (Debian's prometheus package).
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createKey } from './helpers/keys.js'
import { havePrometheus, scrape } from './helpers/metrics.js'
import { login, loginAnswer, owned } from './helpers/owner.js'

/** promtool's exit code and what it printed, for `text` on its stdin. */
async function promtoolCheck(text: string): Promise<{ code: number | null; output: string }> {
  const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stdin.end(text)
  const [code] = (await once(child, 'exit')) as [number | null]
  return { code, output }
}

t.test(
  'promtool check metrics passes the output',
  { skip: !havePrometheus && 'promtool is not installed' },
  async (t) => {
    const o = await owned(t)
    await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'linted', type: 'AES256' })
    await loginAnswer(o.base, 'keymgmt:list', 'a wrong passphrase')
    const text = await scrape(o)
    const { code, output } = await promtoolCheck(text)
    t.equal(output, '', 'no finding')
    t.equal(code, 0)
    // It can fail: a counter without its `_total` is a finding.
    const bad = await promtoolCheck('# HELP hem_bad A counter\n# TYPE hem_bad counter\nhem_bad 1\n')
    t.not(bad.code, 0, 'a broken exposition is refused')
  },
)
