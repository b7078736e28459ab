// hemctl: the command-line client of a device, on the client library.
import { commandsUsage, runCommandLine, UsageError, type Command, type CommandLine } from '../index.js'
import { authCommands } from './auth-commands.js'
import { backupCommands } from './backup-commands.js'
import type { HemctlIo } from './context.js'
import { cryptoCommands } from './crypto-commands.js'
import { hemctlFailure } from './failure.js'
import { deviceCommands } from './device-commands.js'
import { keyCommands } from './key-commands.js'
import { commandFirst } from './leading-options.js'
import { systemCommands } from './system-commands.js'

const commands: Record<string, Command<HemctlIo>> = {
  ...systemCommands,
  ...keyCommands,
  ...cryptoCommands,
  ...deviceCommands,
  ...backupCommands,
  ...authCommands,
}

const cli: CommandLine<HemctlIo> = {
  program: 'hemctl',
  usage: `${commandsUsage('hemctl', '[CONNECTION OPTIONS] COMMAND [OPTIONS]', commands)}
The connection options (--url, --ca, --insecure, --master, --passphrase-file, --json) go before or
after the command.

Exit status: 0 done, 1 the device refused, 2 usage error, 3 the device cannot be reached (or its
certificate is not trusted), 4 login refused or not allowed (401, 403; an authenticator's denial), 5
the device's certificate changed since it was pinned, 130 interrupted while waiting on the cloud.
`,
  commands,
  failure: hemctlFailure,
}

export async function main(argv: string[], io: HemctlIo): Promise<number> {
  let args: string[]
  try {
    args = commandFirst(argv)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    io.stderr.write(`hemctl: ${err.message}\n\n${cli.usage}`)
    return 2
  }
  return runCommandLine(cli, args, io)
}
