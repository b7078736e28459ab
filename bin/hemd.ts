#!/usr/bin/env -S node --max-semi-space-size=8 --max-old-space-size=128
// The flags of the shebang are HEMD_NODE_FLAGS (runtime/node-flags.ts).
import { main } from '../cli/hemd/index.js'

process.exitCode = await main(process.argv.slice(2))
