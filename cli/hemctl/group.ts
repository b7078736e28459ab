import { commandsUsage, runCommandLine, type Command } from '../index.js'
import type { HemctlIo } from './context.js'
import { hemctlFailure } from './failure.js'

/** A command with subcommands (`keys create`, `config get`): its own table, run the same way. */
export function group(
  program: string,
  summary: string,
  subcommands: Record<string, Command<HemctlIo>>,
): Command<HemctlIo> {
  const usage = commandsUsage(program, 'SUBCOMMAND [OPTIONS]', subcommands)
  return {
    summary,
    usage,
    run: (args, io) => runCommandLine({ program, usage, commands: subcommands, failure: hemctlFailure }, args, io),
  }
}
