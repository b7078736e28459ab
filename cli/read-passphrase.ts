import { readFile } from 'node:fs/promises'
import { UsageError } from './command-line.js'

export interface PassphraseSources {
  env: Record<string, string | undefined>
  /** Asks on the terminal without echo; undefined when there is none to ask on. */
  askSecret(prompt: string): Promise<string | undefined>
}

/** A passphrase from a file, else the environment variable, else the terminal: never from the command line. */
export async function readPassphrase(
  sources: PassphraseSources,
  variable: string,
  file: string | undefined,
  prompt: string,
): Promise<string> {
  if (file !== undefined) {
    const text = await readFile(file, 'utf8').catch((err: Error) => {
      throw new UsageError(`cannot read the passphrase file: ${err.message}`)
    })
    return text.replace(/\r?\n$/, '')
  }
  const fromEnv = sources.env[variable]
  if (fromEnv) return fromEnv
  const asked = await sources.askSecret(prompt)
  if (!asked) throw new UsageError(`no passphrase: set ${variable}, give a passphrase file, or run on a terminal`)
  return asked
}
