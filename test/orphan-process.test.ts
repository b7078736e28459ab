import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { killOrphan } from '../hal/sim/orphan-process.js'
import { isProcessAlive } from '../hal/sim/process-alive.js'

async function sleeper(t: Test, seconds: string) {
  const child = spawn('sleep', [seconds], { stdio: 'ignore' })
  await once(child, 'spawn')
  t.teardown(() => void child.kill('SIGKILL'))
  const pidFile = join(t.testdir(), 'pid')
  await writeFile(pidFile, `${child.pid}\n`)
  return { pid: child.pid!, pidFile }
}

t.test('a process whose command line carries every marker is killed', async (t) => {
  const { pid, pidFile } = await sleeper(t, '61')
  await killOrphan(pidFile, ['sleep', '61'])
  t.notOk(isProcessAlive(pid))
})

t.test('a process missing a marker (a reused pid) is left alone', async (t) => {
  const { pid, pidFile } = await sleeper(t, '62')
  await killOrphan(pidFile, ['sleep', 'nats-server.conf'])
  t.ok(isProcessAlive(pid))
})

t.test('no pid file, a garbage one, or its own pid: nothing happens', async (t) => {
  // A process every marker would match, named by none of the files.
  const { pid } = await sleeper(t, '63')
  const dir = t.testdir()
  await killOrphan(join(dir, 'missing'), ['sleep'])
  await writeFile(join(dir, 'garbage'), 'not a pid')
  await killOrphan(join(dir, 'garbage'), ['sleep'])
  await writeFile(join(dir, 'self'), `${process.pid}`)
  await killOrphan(join(dir, 'self'), [])
  t.ok(isProcessAlive(pid), 'the process no file names still runs')
  t.equal(await readFile(join(dir, 'garbage'), 'utf8'), 'not a pid', 'the files are left as they were')
})
