#!/usr/bin/env node
import { main } from '../actors/supervisor/hemd-cli.js'

process.exitCode = await main(process.argv.slice(2))
