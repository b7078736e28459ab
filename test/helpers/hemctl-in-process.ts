// hemctl run in this process with captured io: what a shell would see of it.
import { main } from '../../cli/hemctl/cli.js'
import { USER_PASS } from './owner.js'

export interface HemctlRun {
  stdin?: Uint8Array[]
  env?: Record<string, string>
  /** Default: the runner's own connection arguments. */
  connection?: string[]
}

export interface HemctlResult {
  code: number
  bytes: Buffer
  stdout: string
  stderr: string
}

/** A runner against one device: `connection` (e.g. `--url … --insecure`) and a config home of its own. */
export function hemctlInProcess(connection: string[], configHome: string) {
  return async (argv: string[], { stdin = [], env = {}, connection: given = connection }: HemctlRun = {}) => {
    const out: Buffer[] = []
    let stderr = ''
    const io = {
      stdout: { write: (data: string | Uint8Array) => out.push(Buffer.from(data)) },
      stderr: { write: (text: string) => (stderr += text) },
      env: { HEM_PASSPHRASE: USER_PASS, XDG_CONFIG_HOME: configHome, ...env },
      askSecret: async () => undefined,
      stdin: (async function* () {
        yield* stdin
      })(),
      stderrIsTTY: false,
    }
    const code = await main([...argv, ...given], io)
    const bytes = Buffer.concat(out)
    return { code, bytes, stdout: bytes.toString('utf8'), stderr } satisfies HemctlResult
  }
}
