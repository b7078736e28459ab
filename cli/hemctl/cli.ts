// hemctl: the command-line client of a device, on the client library.
import { commandsUsage, runCommandLine, type Command, type CommandLine } from '../index.js'
import type { HemctlIo } from './context.js'
import { cryptoCommands } from './crypto-commands.js'
import { hemctlFailure } from './failure.js'
import { deviceCommands } from './device-commands.js'
import { keyCommands } from './key-commands.js'
import { systemCommands } from './system-commands.js'

const commands: Record<string, Command<HemctlIo>> = {
  ...systemCommands,
  ...keyCommands,
  ...cryptoCommands,
  ...deviceCommands,
}

const cli: CommandLine<HemctlIo> = {
  program: 'hemctl',
  usage: `${commandsUsage('hemctl', 'COMMAND [OPTIONS]', commands)}
Exit status: 0 done, 1 the device refused, 2 usage error, 3 the device cannot be reached (or its
certificate is not trusted), 4 login refused or not allowed (401, 403), 5 the device's certificate
changed since it was pinned.
`,
  commands,
  failure: hemctlFailure,
}

export function main(argv: string[], io: HemctlIo): Promise<number> {
  return runCommandLine(cli, argv, io)
}
