// hem-authenticator: the external authenticator of contract §4 on the command line, on authenticator/'s core.
import { commandsUsage, runCommandLine, type Command, type CommandLine } from '../index.js'
import { BrokerAnswerError, PairingError } from '../../authenticator/index.js'
import { approveCommand } from './approve-command.js'
import { autoCommand } from './auto-mode.js'
import type { AuthenticatorIo } from './context.js'
import { CloudUrlError } from './https-transport.js'
import { PairingFileError } from './pairing-file.js'
import { pairingCommands } from './pairing-commands.js'
import { SealedValueError } from './passphrase-sealer.js'

const commands: Record<string, Command<AuthenticatorIo>> = {
  ...pairingCommands,
  approve: approveCommand,
  auto: autoCommand,
}

const KNOWN_FAILURES = [BrokerAnswerError, PairingError, PairingFileError, SealedValueError, CloudUrlError]

const cli: CommandLine<AuthenticatorIo> = {
  program: 'hem-authenticator',
  usage: `${commandsUsage('hem-authenticator', 'COMMAND [OPTIONS]', commands)}
Exit status: 0 done, 1 refused (by the user, the cloud, or a check), 2 usage error.
`,
  commands,
  failure: (err) => (KNOWN_FAILURES.some((type) => err instanceof type) ? (err as Error).message : undefined),
}

export function main(argv: string[], io: AuthenticatorIo): Promise<number> {
  return runCommandLine(cli, argv, io)
}
