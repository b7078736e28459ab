#!/usr/bin/env node
import { main } from '../cli/hem-audit/index.js'
import { processIo } from '../cli/index.js'

process.exitCode = await main(process.argv.slice(2), processIo())
