// The command table runner shared by hem-audit, hem-factory and hemctl.

import { parseArgs, type ParseArgsConfig } from 'node:util'

export interface CliIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
}

export interface Command<Io extends CliIo = CliIo> {
  summary: string
  usage: string
  run(args: string[], io: Io): Promise<number>
}

export interface CommandLine<Io extends CliIo = CliIo> {
  program: string
  usage: string
  commands: Record<string, Command<Io>>
  /** Starts a command's error messages instead of `PROGRAM COMMAND`. */
  prefix?: string
  /** The message for an error that means exit 1 (or the exit status given), or undefined to rethrow the error. */
  failure?(err: unknown): string | { message: string; exit: number } | undefined
}

/** Bad invocation: exit code 2, message and the command's usage on stderr. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

// Thrown by parseOptions rather than checked before the command runs, so that help is only
// given for arguments that parse.
class HelpRequest extends Error {}

export async function runCommandLine<Io extends CliIo>(cli: CommandLine<Io>, argv: string[], io: Io): Promise<number> {
  const { program, commands } = cli
  const [name, ...args] = argv
  if (name === '--help' || name === '-h') {
    io.stdout.write(cli.usage)
    return 0
  }
  const command = name !== undefined && Object.hasOwn(commands, name) ? commands[name] : undefined
  if (!command) {
    io.stderr.write(
      `${program}: ${name === undefined ? 'no command given' : `unknown command '${name}'`}\n\n${cli.usage}`,
    )
    return 2
  }
  const prefix = cli.prefix ?? `${program} ${name}`
  try {
    return await command.run(args, io)
  } catch (err) {
    if (err instanceof HelpRequest) {
      io.stdout.write(command.usage)
      return 0
    }
    if (err instanceof UsageError) {
      io.stderr.write(`${prefix}: ${err.message}\n\n${command.usage}`)
      return 2
    }
    const failure = cli.failure?.(err)
    if (failure === undefined) throw err
    const { message, exit } = typeof failure === 'string' ? { message: failure, exit: 1 } : failure
    io.stderr.write(`${prefix}: ${message}\n`)
    return exit
  }
}

/** `Usage: PROGRAM SYNOPSIS`, the commands with their summaries, and where to get more help. */
export function commandsUsage(
  program: string,
  synopsis: string,
  commands: Record<string, { summary: string }>,
): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length))
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`)
  return (
    `Usage: ${program} ${synopsis}\n\nCommands:\n${lines.join('\n')}\n\n` +
    `Run '${program} COMMAND --help' for a command's options.\n`
  )
}

/** node's parseArgs with -h/--help added; a bad argument throws a UsageError. */
export function parseOptions<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  let parsed
  try {
    parsed = parseArgs<ParseArgsConfig>({
      ...config,
      options: { ...config.options, help: { type: 'boolean', short: 'h' } },
    })
  } catch (err) {
    if (String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_'))
      throw new UsageError((err as Error).message)
    throw err
  }
  if (parsed.values.help) throw new HelpRequest()
  return parsed as ReturnType<typeof parseArgs<T>>
}
