#!/usr/bin/env node
import { main } from '../actors/provisioning/factory-cli.js'

process.exitCode = await main(process.argv.slice(2), process)
