import { main, type AuthenticatorIo } from '../../cli/hem-authenticator/index.js'

export interface AuthenticatorRun {
  /** Resolves with the exit code. */
  done: Promise<number>
  /** What it wrote so far. */
  stdout(): string
  stderr(): string
  /** As SIGINT would. */
  stop(): void
}

/**
 * Runs hem-authenticator's `main` in this process: the passphrase from `env`, `answers` given one per
 * question in order (undefined after the last, as at the end of a terminal's input).
 */
export function runAuthenticator(
  argv: string[],
  o: { env?: Record<string, string>; answers?: string[] } = {},
): AuthenticatorRun {
  let stdout = ''
  let stderr = ''
  const answers = [...(o.answers ?? [])]
  const controller = new AbortController()
  const io: AuthenticatorIo = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: o.env ?? {},
    askSecret: () => Promise.resolve(undefined),
    ask: (question) => {
      stdout += question
      return Promise.resolve(answers.shift())
    },
    stop: controller.signal,
  }
  return { done: main(argv, io), stdout: () => stdout, stderr: () => stderr, stop: () => controller.abort() }
}
