import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { HEMD_NODE_FLAGS } from './node-flags.js'
import { SETPRIV, setprivArgs, type ServiceAccount } from './service-accounts.js'
import type { ServiceChildConfig, ServiceChildMessage } from './service-child-config.js'

/** A service process that said it is ready, with the ports its gateway listens on. */
export interface StartedProcess {
  child: ChildProcess
  ready: { httpPort?: number; httpsPort?: number }
}

const hemdBinary = fileURLToPath(
  import.meta.url.endsWith('.ts')
    ? new URL('../dist/bin/hemd.js', import.meta.url)
    : new URL('../bin/hemd.js', import.meta.url),
)

/** Children the supervisor is stopping on purpose: their exit is not a crash. */
const stopping = new WeakSet<ChildProcess>()

/** Whether a child's exit was asked for. */
export const stoppedOnPurpose = (child: ChildProcess): boolean => stopping.has(child)

/** Forks a service process as its account, sends it its configuration and waits until it is ready. */
export async function startServiceProcess(
  config: ServiceChildConfig,
  account: ServiceAccount | undefined,
): Promise<StartedProcess> {
  // hemd's own flags, whatever started the supervisor: not the loaders a test harness hooked into this
  // process, which a service's own user could not even read (a harness's coverage goes by the environment).
  const child = fork(hemdBinary, ['--service', config.service], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // setpriv drops to the service's user before Node starts: the process never holds root.
    ...(SETPRIV
      ? { execPath: SETPRIV, execArgv: [...setprivArgs(account), process.execPath, ...HEMD_NODE_FLAGS] }
      : { execArgv: [...HEMD_NODE_FLAGS] }),
  })
  child.send(config)
  const [message] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => [{ type: 'failed', message: `exited with code ${code}` }]),
  ])) as [ServiceChildMessage]
  if (message.type !== 'ready') {
    child.kill('SIGKILL')
    throw new Error(`the ${config.service} process did not start: ${message.message}`)
  }
  return { child, ready: message }
}

/** Asks a service process to stop, and kills it if it has not within 10 s. */
export async function stopServiceProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  stopping.add(child)
  const exited = once(child, 'exit')
  child.send({ type: 'stop' })
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}
