// On P, `GET /api/system/shutdown` stops the device (crypto-contract §6): it stops answering on
// both ports (the contract's target is 3 s; a loaded test machine gets a generous bound and the
// time is printed) and stays stopped until started again: the launcher exits 0, which systemd's
// Restart=on-failure does not restart, and nothing brings the runtime back.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { isProcessAlive } from '../hal/sim/process-alive.js'
import { LogType } from '../protocol/journal.js'
import { repoRoot } from './helpers/device.js'
import { call } from './helpers/http.js'
import { runHemd } from './helpers/hemd-process.js'
import { readJournal } from './helpers/journal.js'
import { bearer, login, owned, personalise } from './helpers/owner.js'
import { bothRefuse } from './helpers/try-call.js'
import { until } from './helpers/until.js'

/** Far above the contract's 3 s: the test machine runs other suites at the same time. */
const BOUND_MS = 30_000
/** How long the device is watched after it stopped, for anything that would bring it back. */
const WATCH_MS = 4_000

/** Asks for the shutdown; resolves with the ms from the request until both ports refuse. */
async function shutDown(t: Test, http: string, https: string, token: string): Promise<number> {
  const start = performance.now()
  t.equal((await call(`${http}/api/system/shutdown`, { headers: bearer(token) })).status, 200, 'answered first')
  await until('both ports refuse', () => bothRefuse(http, https), BOUND_MS)
  const ms = performance.now() - start
  t.comment(`the device stopped answering ${Math.round(ms)} ms after the shutdown was asked for (target 3000 ms)`)
  return ms
}

/** Both ports keep refusing for WATCH_MS. */
async function staysDown(t: Test, http: string, https: string): Promise<void> {
  const until = performance.now() + WATCH_MS
  let down = true
  while (down && performance.now() < until) {
    down = await bothRefuse(http, https)
    await sleep(100)
  }
  t.ok(down, `both ports still refuse ${WATCH_MS} ms later`)
}

t.test('P, in process: shutdown stops both ports, device.stopped resolves, and it stays down', async (t) => {
  const { device, base, https } = await owned(t, { variant: 'P' })
  const token = await login(base, 'system:shutdown')
  let stoppedAt: number | undefined
  void device.stopped.then(() => (stoppedAt = performance.now()))
  const start = performance.now()
  t.ok((await shutDown(t, base, https, token)) < BOUND_MS)
  await device.stopped
  t.comment(`device.stopped resolved ${Math.round(stoppedAt! - start)} ms after the request`)
  await staysDown(t, base, https)
  const { records } = await readJournal(device.dataDir)
  t.equal(records.filter((r) => r.type === LogType.STARTUP).length, 1, 'no second boot')
  t.equal(records.filter((r) => r.type !== LogType.SEAL).at(-1)?.type, LogType.SHUTDOWN, 'SHUTDOWN is the last event')
})

t.test('P, the real hemd: the launcher exits 0 and does not start the runtime again', async (t) => {
  const data = join(t.testdir(), 'data')
  const hemd = await runHemd(t, ['--data', data, '--variant', 'P'])
  const base = hemd.httpUrl
  t.equal((await personalise(base, 'P')).status, 200)
  await until('formatting done', async () => (await call(`${base}/api/system/status`)).json.format === 'done')
  const runtimePid = Number(await readFile(join(data, 'run', 'runtime.pid'), 'utf8'))
  const natsPid = Number(/pid (\d+)\)/.exec(hemd.stdout())![1])
  const exited = new Promise<number | null>((resolve) => hemd.child.once('exit', (code) => resolve(code)))

  const start = performance.now()
  await shutDown(t, base, hemd.httpsUrl, await login(base, 'system:shutdown'))
  const code = await Promise.race([exited, sleep(BOUND_MS).then(() => 'still running' as const)])
  t.comment(`the launcher exited ${Math.round(performance.now() - start)} ms after the request`)
  t.equal(code, 0, 'hemd exits 0: a clean stop, not a failure')
  t.match(hemd.stdout(), /stopped \(journal sealed\)/)
  t.notMatch(hemd.stderr(), /starting it again/, 'the launcher did not restart the runtime')
  t.notOk(isProcessAlive(runtimePid), 'the runtime is gone')
  t.notOk(isProcessAlive(natsPid), 'and its bus')
  await staysDown(t, base, hemd.httpsUrl)
  const startups = (await readJournal(data)).records.filter((r) => r.type === LogType.STARTUP)
  t.equal(startups.length, 1, 'one boot only')

  // The unit restarts a failure only: exit 0 is no failure, and no status is forced to restart.
  const unit = await readFile(join(repoRoot, 'deploy', 'systemd', 'hemd.service'), 'utf8')
  t.match(unit, /^Restart=on-failure$/m, 'systemd restarts hemd on failure only')
  t.notMatch(unit, /^RestartForceExitStatus=/m, 'no exit status is forced to restart')
})
