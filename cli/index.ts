// The public face of cli/: what other folders may use of it.
export { processIo } from './ask-secret.js'
export {
  commandsUsage,
  parseOptions,
  runCommandLine,
  UsageError,
  type CliIo,
  type Command,
  type CommandLine,
} from './command-line.js'
export { streamGeneration } from './stream-generation.js'
export { readPassphrase, type PassphraseSources } from './read-passphrase.js'
