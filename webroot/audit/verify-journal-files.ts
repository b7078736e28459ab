// Verifies a device's journal files in the browser with the log public key: the device's own checks
// (MACs, KEY_INIT signatures, the chain, seals, links, signed heads), over @noble's primitives.
import { checkJournal, type VerifyOptions, checkSegment, type SegmentCheck } from '../../eventstore/browser.js'
import type { JournalFile, VerifyResult } from '../../protocol/browser.js'
import { nobleJournalCrypto } from './noble-journal-crypto.js'

/** Called after each file's own check: `done` of `total` files checked. */
export type VerifyProgress = (done: number, total: number, file: string) => void

/**
 * verifyJournal's result for `files`, checked one file at a time with a pause between files, so
 * that the page stays responsive and can show `progress` on a long journal.
 */
export async function verifyJournalFiles(
  files: JournalFile[],
  publicKey: Uint8Array,
  options: VerifyOptions = {},
  progress?: VerifyProgress,
): Promise<VerifyResult> {
  const verify = nobleJournalCrypto.ed25519Verifier(publicKey)
  const checks = new Map<JournalFile, SegmentCheck>()
  for (const file of files) {
    checks.set(file, checkSegment(file.id, file.bytes, verify, nobleJournalCrypto))
    progress?.(checks.size, files.length, file.id)
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
  return checkJournal(files, publicKey, options, nobleJournalCrypto, (file) => checks.get(file)!)
}
