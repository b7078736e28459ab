import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { connect } from 'node:tls'
import { X509Certificate } from 'node:crypto'
import { HEMD_MALLOC_ENV } from '../runtime/node-flags.js'
import { isProcessAlive } from '../hal/sim/process-alive.js'
import { call } from './helpers/http.js'
import { until } from './helpers/until.js'
import { auditBin, hemdBin, runHemd, runToEnd } from './helpers/hemd-process.js'
import { writeSelfSignedCert } from './helpers/self-signed-cert.js'

async function auditVerify(dataDir: string, key: string) {
  return runToEnd(auditBin, ['verify', '--key', key, `${dataDir}/journal`])
}

/** `pid args` of each child of `pid` (ps exits 1 when there is none). */
function childrenOf(pid: number): string {
  return spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout.trim()
}

t.test('hemd starts, prints where it is, answers, and stops cleanly on Ctrl-C', async (t) => {
  const data = `${t.testdir()}/data`
  const hemd = await runHemd(t, ['--data', data])
  t.match(hemd.stdout(), /variant P, devid [0-9a-f]{16}/)
  t.match(hemd.stdout(), new RegExp(`data\\s+${data}`))
  t.match(hemd.stdout(), /bus\s+nats:\/\/127\.0\.0\.1:\d+ \(own nats-server, pid \d+\)/)
  t.match(hemd.stdout(), /Next: curl/)
  t.equal((await call(`${hemd.httpUrl}/api/system/status`)).status, 200)
  t.equal((await call(`${hemd.httpsUrl}/api/system/version`)).status, 200)
  const natsPid = Number(/pid (\d+)\)/.exec(hemd.stdout())![1])

  t.equal(await hemd.interrupt(), 0, hemd.stderr())
  t.match(hemd.stdout(), /stopped \(journal sealed\)/)
  t.notMatch(
    hemd.stderr(),
    /nats-server exited/,
    'Ctrl-C to the process group does not take the bus down under the actors',
  )
  t.notOk(isProcessAlive(natsPid), 'nats-server is stopped too')
  const audit = await auditVerify(data, hemd.logKey)
  t.equal(audit.code, 0, audit.stdout + audit.stderr)
})

t.test('a second hemd on the same data dir refuses with a clear message', async (t) => {
  const data = `${t.testdir()}/data`
  const first = await runHemd(t, ['--data', data])
  const second = await runToEnd(hemdBin, [
    '--data',
    data,
    '--http',
    '127.0.0.1:0',
    '--https',
    '127.0.0.1:0',
    '--dev-keys',
  ])
  t.equal(second.code, 1)
  t.match(second.stderr, new RegExp(`in use by pid ${first.child.pid}`))
  t.match(second.stderr, /--data/)
})

t.test(
  'after kill -9 the nats-server goes with its runtime and the next start recovers: ' +
    'journal sealed as recovered, all verifies',
  async (t) => {
    const data = `${t.testdir()}/data`
    const first = await runHemd(t, ['--data', data])
    const natsPid = Number(/pid (\d+)\)/.exec(first.stdout())![1])
    // The launcher's process group: the launcher and its runtime at once (nats-server has a group of its own).
    process.kill(-first.child.pid!, 'SIGKILL')
    await new Promise((r) => first.child.once('exit', r))
    await until('the nats-server gone with the runtime killed under it', () => !isProcessAlive(natsPid))

    const second = await runHemd(t, ['--data', data])
    t.equal((await call(`${second.httpUrl}/api/system/status`)).json.fls_state, 0)
    t.equal(await second.interrupt(), 0, second.stderr())
    const audit = await auditVerify(data, second.logKey)
    t.equal(audit.code, 0, audit.stdout + audit.stderr)
    const files = (await runToEnd(auditBin, ['verify', '--json', '--key', second.logKey, `${data}/journal`])).stdout
    t.equal(JSON.parse(files).summary.files, 2)
    const firstFile = execFileSync('ls', [`${data}/journal`])
      .toString()
      .split('\n')[0]!
    t.match(await readFile(`${data}/journal/${firstFile}`, 'utf8'), /\|81\|0\|\|/, "the killed boot's file got a seal")
  },
)

t.test('--split runs every service in its own process and stops them all', async (t) => {
  const data = `${t.testdir()}/data`
  const hemd = await runHemd(t, ['--data', data, '--split', '--variant', 'E'])
  t.match(hemd.stdout(), /split into processes/)
  // No hemd-<service> users here (and maybe no root): the banner says the processes share one user.
  t.match(hemd.stdout(), /split into processes \(NO uid separation: .+\)/, 'it says it runs without uid separation')
  // hemd is the launcher; the device's runtime is its child, and the services are the runtime's.
  const runtime = /^\s*(\d+) .*--runtime/m.exec(childrenOf(hemd.child.pid!))
  t.ok(runtime, 'the launcher runs the runtime')
  const children = childrenOf(Number(runtime![1]))
  for (const service of ['eventstore', 'system', 'auth', 'keystore', 'logger', 'storage', 'upgrade', 'gateway'])
    t.match(children, new RegExp(`--service ${service}`))
  // The allocator's settings reach the runtime and, through it, every service process.
  const gatewayPid = Number(/^\s*(\d+) .*--service gateway/m.exec(children)![1])
  for (const pid of [Number(runtime![1]), gatewayPid]) {
    const environ = (await readFile(`/proc/${pid}/environ`, 'latin1')).split('\0')
    for (const [name, value] of Object.entries(HEMD_MALLOC_ENV))
      t.ok(environ.includes(`${name}=${value}`), `${name}=${value} in pid ${pid}'s environment`)
  }
  const status = await call(`${hemd.httpUrl}/api/system/status`)
  t.equal(status.status, 200)
  t.notOk('storage' in status.json)
  t.match((await call(`${hemd.httpsUrl}/api/system/version`)).json.hwv, /EPA/)
  t.equal(await hemd.interrupt(), 0, hemd.stderr())
  t.equal(childrenOf(Number(runtime![1])), '', 'no service process is left')
  t.notOk(isProcessAlive(Number(runtime![1])), 'nor the runtime')
  const audit = await auditVerify(data, hemd.logKey)
  t.equal(audit.code, 0, audit.stdout + audit.stderr)
})

t.test("--tls-cert and --tls-key serve the operator's certificate", async (t) => {
  const dir = t.testdir()
  writeSelfSignedCert('operator.example', `${dir}/cert.pem`, `${dir}/key.pem`)
  const hemd = await runHemd(t, [
    '--data',
    `${dir}/data`,
    '--tls-cert',
    `${dir}/cert.pem`,
    '--tls-key',
    `${dir}/key.pem`,
  ])
  t.match(hemd.stdout(), /operator certificate/)
  const url = new URL(hemd.httpsUrl)
  const served = await new Promise<X509Certificate>((resolve, reject) => {
    const socket = connect(
      { host: url.hostname, port: Number(url.port), rejectUnauthorized: false, minVersion: 'TLSv1.3' },
      () => {
        resolve(socket.getPeerX509Certificate()!)
        socket.end()
      },
    )
    socket.on('error', reject)
  })
  t.equal(served.fingerprint256, new X509Certificate(await readFile(`${dir}/cert.pem`)).fingerprint256)
  t.ok(hemd.stdout().includes(`  tls    SHA-256 ${served.fingerprint256}\n`), "the banner's tls line: its fingerprint")
})

t.test('usage', async (t) => {
  const help = await runToEnd(hemdBin, ['--help'])
  t.equal(help.code, 0)
  for (const flag of ['--variant', '--data', '--http', '--https', '--nats', '--tls-cert', '--tls-key', '--split'])
    t.match(help.stdout, flag)
  const bad = await runToEnd(hemdBin, ['--variant', 'Q'])
  t.equal(bad.code, 2)
  t.match(bad.stderr, /--variant must be P or E/)
})
