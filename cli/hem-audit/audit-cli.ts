// hem-audit: forensics on a device's journal. A thin shell over eventstore/: each subcommand
// parses its arguments, loads files and prints what the library found. Only fetch goes online.

import { DeviceRefusedError } from '../../client/index.js'
import { type CliIo, type CommandLine, commandsUsage, type PassphraseSources, runCommandLine } from '../index.js'
import { FETCH_USAGE, runFetch, type FetchIo } from './audit-fetch.js'
import { AuditFinding } from './audit-finding.js'
import { REPLAY_USAGE, runReplay } from './audit-replay.js'
import { runTimeline, TIMELINE_USAGE } from './audit-timeline.js'
import { runVerify, VERIFY_USAGE } from './audit-verify.js'
import { FetchJournalError } from '../../audit/index.js'

const commands = {
  verify: {
    summary: 'check signatures, MACs, chain, seals and links of journal files',
    usage: VERIFY_USAGE,
    run: runVerify,
  },
  replay: {
    summary: 'rebuild the state of every machine of the device, at the end or at a point',
    usage: REPLAY_USAGE,
    run: runReplay,
  },
  timeline: { summary: 'tell what happened, one line per event', usage: TIMELINE_USAGE, run: runTimeline },
  fetch: { summary: "download a device's log files and log key through its API", usage: FETCH_USAGE, run: runFetch },
}

const cli: CommandLine<FetchIo> = {
  program: 'hem-audit',
  usage: commandsUsage('hem-audit', 'COMMAND [OPTIONS] FILES|DIR...', commands),
  commands,
  failure: (err) =>
    err instanceof AuditFinding || err instanceof DeviceRefusedError || err instanceof FetchJournalError
      ? err.message
      : undefined,
}

/**
 * `env` is for fetch's passphrase and a backend's credentials, `askSecret`
 * for the passphrase: by default none, and no terminal to ask on.
 */
export function main(argv: string[], io: CliIo & Partial<PassphraseSources>): Promise<number> {
  return runCommandLine(cli, argv, { env: {}, askSecret: () => Promise.resolve(undefined), ...io })
}
