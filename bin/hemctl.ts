#!/usr/bin/env node
import { askSecret } from '../cli/index.js'
import { main } from '../cli/hemctl/index.js'

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  askSecret,
  stdin: process.stdin,
  stderrIsTTY: process.stderr.isTTY === true,
})
