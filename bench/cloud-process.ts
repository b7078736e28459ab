import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { ServerProcess } from './baseline-process.js'
import type { TlsFiles } from './types.js'

const HEM_CLOUD = fileURLToPath(new URL('../bin/hem-cloud.js', import.meta.url))
const BACKEND_KEY = fileURLToPath(new URL('../../deploy/keys/backend-dev.pem', import.meta.url))

/**
 * The built hem-cloud as an owner runs it alone: its own nats-server with JetStream in `dataDir`, HTTPS with the
 * bench certificate (TLS 1.3, as the baselines), its own defaults otherwise (rate limits included). Resolves with its
 * URL once its banner says it listens.
 */
export async function startCloudProcess(dataDir: string, tls: TlsFiles): Promise<ServerProcess> {
  const args = ['--listen', '127.0.0.1:0', '--data', dataDir, '--backend-key', BACKEND_KEY, '--log-level', 'warn']
  // Its own process group, as every server under test: a Ctrl-C reaches only the bench, which stops it.
  const child = spawn(process.execPath, [HEM_CLOUD, ...args, '--tls-cert', tls.certFile, '--tls-key', tls.keyFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  })
  const exited = once(child, 'exit')
  let stderr = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
      const banner = /listening on (https:\S+)/.exec(stderr)
      if (banner) resolve(banner[1]!)
    })
    void exited.then(([code]) => reject(new Error(`hem-cloud exited with ${String(code)}: ${stderr}`)))
  })
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      await exited
    },
  }
}
