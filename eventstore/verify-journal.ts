// Verifies a set of segment files with only the log public key, through node:crypto (check-journal.ts
// holds the checks), remembering each file's check for the same bytes (checked-segments.ts).

import { checkJournal, type VerifyOptions } from './check-journal.js'
import { checkSegmentOnce } from './checked-segments.js'
import { nodeJournalCrypto } from './node-journal-crypto.js'
import type { JournalFile, VerifyResult } from '../protocol/index.js'

export type { VerifyOptions }

export function verifyJournal(files: JournalFile[], publicKey: Uint8Array, opts: VerifyOptions = {}): VerifyResult {
  return checkJournal(files, publicKey, opts, nodeJournalCrypto, (file) =>
    checkSegmentOnce(file.id, file.bytes, publicKey),
  )
}
