#!/usr/bin/env node
import { processIo } from '../cli/index.js'
import { main } from '../cli/hemctl/index.js'

process.exitCode = await main(process.argv.slice(2), {
  ...processIo(),
  stdin: process.stdin,
  stderrIsTTY: process.stderr.isTTY === true,
})
