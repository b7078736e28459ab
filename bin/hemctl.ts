#!/usr/bin/env node
import { processIo } from '../cli/index.js'
import { lineReader } from '../cli/hem-authenticator/index.js'
import { main } from '../cli/hemctl/index.js'

process.exitCode = await main(process.argv.slice(2), {
  ...processIo(),
  ask: lineReader(),
  stdin: process.stdin,
  stderrIsTTY: process.stderr.isTTY === true,
})
