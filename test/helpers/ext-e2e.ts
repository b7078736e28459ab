// The family's cloud and an automatic authenticator as the processes an owner runs: the built `hem-cloud` (test
// mode, its own data dir and embedded nats-server, the development keys of `npm run cloud`) and the built
// `hem-authenticator auto`. Each is stopped with SIGTERM at the test's end, and waited for, so that no nats-server
// is left behind.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { distDir, repoRoot } from './device.js'
import { until } from './until.js'

const keys = `${repoRoot}deploy/keys`

export interface Started {
  child: ChildProcess
  stdout(): string
  stderr(): string
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>
}

function start(t: { teardown(fn: () => unknown): void }, bin: string, args: string[]): Started {
  const child = spawn(process.execPath, [`${distDir}/bin/${bin}.js`, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    await exited
  }
  t.teardown(stop)
  return { child, stdout: () => stdout, stderr: () => stderr, stop }
}

/**
 * `hem-cloud --test-mode` on a port the kernel picks, its URL read from the banner. Its data dir is its own, removed
 * once it has stopped: a test's directory is emptied while nats-server may still be writing in it.
 */
export async function cloudProcess(t: {
  teardown(fn: () => unknown): void
}): Promise<Started & { url: string; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hem-cloud-e2e-'))
  const cloud = start(t, 'hem-cloud', [
    ...['--listen', '127.0.0.1:0', '--data', dataDir, '--test-mode', '--backend-key', `${keys}/backend-dev.pem`],
    ...['--ca-cert', `${keys}/domain-ca-dev.crt.pem`, '--ca-key', `${keys}/domain-ca-dev.key.pem`],
    ...['--domain', 'ence.do', '--authkey', 'dev-authkey', '--log-level', 'warn'],
  ])
  t.teardown(async () => {
    await cloud.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  const banner = /listening on (http:\S+)/
  await until('the cloud banner', () => banner.test(cloud.stderr()) || cloud.child.exitCode !== null)
  const url = banner.exec(cloud.stderr())?.[1]
  if (url === undefined) throw new Error(`hem-cloud did not start: ${cloud.stderr()}`)
  return { ...cloud, url, dataDir }
}

/** `hem-authenticator auto --cloud URL --decide DECISIONS`, polling once it says so. */
export async function autoAuthenticator(
  t: { teardown(fn: () => unknown): void },
  cloud: string,
  decide: string,
): Promise<Started> {
  const auto = start(t, 'hem-authenticator', ['auto', '--cloud', cloud, '--decide', decide, '--label', 'e2e phone'])
  await until(
    'the authenticator polling',
    () => auto.stdout().includes('auto: polling') || auto.child.exitCode !== null,
  )
  if (auto.child.exitCode !== null) throw new Error(`hem-authenticator did not start: ${auto.stderr()}`)
  return auto
}
