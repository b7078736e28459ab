import { chainStart, chainStep } from './chain.js'
import { ed25519Verifier } from './ed25519-verifier.js'
import type { JournalCrypto } from './journal-crypto.js'
import { lineMac } from './line-mac.js'

/** The journal's primitives through node:crypto: what the device and the tools check with. */
export const nodeJournalCrypto: JournalCrypto = { chainStart, chainStep, lineMac, ed25519Verifier }
