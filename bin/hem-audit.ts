#!/usr/bin/env node
import { main } from '../eventstore/audit-cli.js'
import { askSecret } from '../client/ask-secret.js'

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, askSecret })
