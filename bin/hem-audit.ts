#!/usr/bin/env node
import { main } from '../cli/hem-audit/index.js'
import { askSecret } from '../cli/index.js'

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  askSecret,
})
