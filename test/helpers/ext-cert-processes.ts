// The certification harness's other parties as the processes an operator runs: hem-cloud in test mode with the
// development keys (as `npm run cloud`, on a kernel-chosen port) and `hem-authenticator auto`.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { distDir, repoRoot } from './device.js'
import { until } from './until.js'

export const DEV_KEYS = `${repoRoot}deploy/keys`
export const CERT_ZONE = 'ence.do'
export const CERT_AUTHKEY = 'cert-authkey-1'

export interface RunningProcess {
  child: ChildProcess
  /** Everything it wrote so far, both streams. */
  output(): string
}

interface Teardown {
  teardown(fn: () => unknown): void
}

/** Spawns a built executable of dist/bin, collecting its output; SIGTERM and a wait in teardown. */
function spawnBin(t: Teardown, bin: string, args: string[]): RunningProcess {
  const child = spawn(process.execPath, [`${distDir}/bin/${bin}`, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c))
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c))
  const exited = once(child, 'exit')
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await exited
    }
  })
  return { child, output: () => out }
}

/** `hem-cloud --test-mode` with its own data directory; resolves with its URL, read from its banner. */
export async function startCertCloud(t: Teardown, dataDir: string): Promise<RunningProcess & { url: string }> {
  const cloud = spawnBin(t, 'hem-cloud.js', [
    ...['--listen', '127.0.0.1:0', '--data', dataDir, '--test-mode', '--log-level', 'warn'],
    ...['--backend-key', `${DEV_KEYS}/backend-dev.pem`],
    ...['--ca-cert', `${DEV_KEYS}/domain-ca-dev.crt.pem`, '--ca-key', `${DEV_KEYS}/domain-ca-dev.key.pem`],
    ...['--domain', CERT_ZONE, '--authkey', CERT_AUTHKEY],
  ])
  const banner = /listening on (http:\S+)/
  await until(
    'the cloud banner',
    () => {
      if (cloud.child.exitCode !== null) throw new Error(`hem-cloud exited: ${cloud.output()}`)
      return banner.test(cloud.output())
    },
    { rethrow: true },
  )
  return { ...cloud, url: banner.exec(cloud.output())![1]! }
}

/** `hem-authenticator auto --cloud URL --decide LIST`, once it polls. */
export async function startAutoAuthenticator(t: Teardown, cloud: string, decide: string): Promise<RunningProcess> {
  const auto = spawnBin(t, 'hem-authenticator.js', ['auto', '--cloud', cloud, '--decide', decide])
  await until(
    'the authenticator polls',
    () => {
      if (auto.child.exitCode !== null) throw new Error(`hem-authenticator exited: ${auto.output()}`)
      return auto.output().includes('auto: polling')
    },
    { rethrow: true },
  )
  return auto
}
