#!/usr/bin/env node
import { main } from '../eventstore/audit-cli.js'

process.exitCode = await main(process.argv.slice(2), process)
