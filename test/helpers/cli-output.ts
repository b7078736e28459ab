import type { CliIo } from '../../cli/index.js'

export interface CliOutput {
  code: number
  stdout: string
  stderr: string
}

/** Runs a command line's `main` in this process and keeps what it writes. */
export async function runCli(main: (argv: string[], io: CliIo) => Promise<number>, argv: string[]): Promise<CliOutput> {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  })
  return { code, stdout, stderr }
}
