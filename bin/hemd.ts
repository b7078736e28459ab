#!/usr/bin/env -S node --max-semi-space-size=8 --max-old-space-size=128
// The flags of the shebang are HEMD_NODE_FLAGS (actors/supervisor/node-flags.ts).
import { main } from '../actors/supervisor/hemd-cli.js'

process.exitCode = await main(process.argv.slice(2))
