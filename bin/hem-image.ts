#!/usr/bin/env node
import { main } from '../image/image-cli.js'

process.exitCode = await main(process.argv.slice(2), process)
