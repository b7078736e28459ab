#!/usr/bin/env node
import { processIo } from '../cli/index.js'
import { lineReader, main } from '../cli/hem-authenticator/index.js'

process.exitCode = await main(process.argv.slice(2), { ...processIo(), ask: lineReader() })
