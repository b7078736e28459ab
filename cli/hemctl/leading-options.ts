// Connection options before the command (`hemctl --url URL status`), as git, kubectl and vault take
// their global options: moved after the command, where each command reads and checks them itself.
import { UsageError } from '../index.js'
import { connectionOptions } from './context.js'

type ConnectionOption = keyof typeof connectionOptions

function connectionOption(arg: string): ConnectionOption | undefined {
  const name = arg.startsWith('--') ? arg.slice(2).split('=')[0]! : ''
  return Object.hasOwn(connectionOptions, name) ? (name as ConnectionOption) : undefined
}

/**
 * `argv` with the connection options that lead it moved behind the command and its arguments
 * (before a `--`, after which nothing is an option). One given both before and after the command
 * is refused: which device or passphrase was meant cannot be told.
 */
export function commandFirst(argv: readonly string[]): string[] {
  const leading: string[] = []
  const named = new Set<string>()
  let at = 0
  for (let option = connectionOption(argv[0] ?? ''); option; option = connectionOption(argv[at] ?? '')) {
    const takesValue = connectionOptions[option].type === 'string' && !argv[at]!.includes('=')
    leading.push(...argv.slice(at, at + (takesValue ? 2 : 1)))
    named.add(option)
    at += takesValue ? 2 : 1
  }
  const rest = argv.slice(at)
  // Options and no command: runCommandLine's `no command given`.
  if (rest.length === 0) return []
  if (rest[0]?.startsWith('-') && rest[0] !== '--help' && rest[0] !== '-h')
    throw new UsageError(`unknown option '${rest[0].split('=')[0]}' before the command`)
  const end = rest.includes('--') ? rest.indexOf('--') : rest.length
  const twice = rest.slice(0, end).find((arg) => named.has(connectionOption(arg) ?? ''))
  if (twice !== undefined)
    throw new UsageError(`${twice.split('=')[0]} is given before and after the command: give it once`)
  return [...rest.slice(0, end), ...leading, ...rest.slice(end)]
}
