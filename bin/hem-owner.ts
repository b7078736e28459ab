#!/usr/bin/env node
import { main } from '../client/owner-cli.js'
import { askSecret } from '../client/ask-secret.js'

process.exitCode = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  askSecret,
})
