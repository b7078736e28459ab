// Signed heads against the files: a head the device signed (GET /api/logger/key, a stream's
// batch) says the journal reached that record with that chain head, so files that stop short of
// it were cut, and it vouches for the records up to it that no seal covers yet.

import { bytesEqual } from './bytes-equal.js'
import { headAfter } from './head-after.js'
import type { Ed25519Verifier, JournalCrypto } from './journal-crypto.js'
import { headMessage } from './seal-message.js'
import type { JournalFile, VerifyProblem } from '../protocol/journal.js'

export interface HeadClaim {
  file: string
  seq: number
  /** Ed25519 by the log key over headMessage(file, seq, head). */
  sig: Uint8Array
  /** The chain head it claims; when absent (a stream's header), the files' own chain after that record. */
  head?: Uint8Array
  /** Where it came from, for the problems: "the signed head", "stream message 12". */
  source: string
}

const hex = (n: number): string => n.toString(16)

/**
 * Checks every claim against the files (sorted by id); returns the problems and, per file, the
 * highest seq a verified claim covers.
 */
export function checkHeads(
  claims: HeadClaim[],
  files: JournalFile[],
  verify: Ed25519Verifier,
  crypto: JournalCrypto,
): { problems: VerifyProblem[]; covered: Map<string, number> } {
  const problems: VerifyProblem[] = []
  const covered = new Map<string, number>()
  const newest = files.at(-1)?.id
  for (const claim of claims) {
    const where = `${claim.file}:seq ${hex(claim.seq)}`
    const at = { file: claim.file, seq: claim.seq }
    const file = files.find((f) => f.id === claim.file)
    if (!file) {
      const why =
        newest === undefined || claim.file > newest
          ? `the files end before it (the newest given is ${newest ?? 'none'}): the journal was cut at its end`
          : `file ${claim.file} is not among the files given`
      problems.push({ ...at, message: `${claim.source} is at ${where}, but ${why}` })
      continue
    }
    const head = headAfter(claim.file, file.bytes, claim.seq, crypto)
    if (!head) {
      const message =
        `${claim.source} is at ${where}, but the file has no such record: ` + 'records were removed from its end'
      problems.push({ ...at, message })
      continue
    }
    if (claim.head && !bytesEqual(claim.head, head)) {
      const message = `the chain after ${where} is not the one ${claim.source} names: the file was changed`
      problems.push({ ...at, message })
      continue
    }
    if (!verify(headMessage(claim.file, claim.seq, head), claim.sig)) {
      problems.push({ ...at, message: `${claim.source} at ${where} does not verify with the log key` })
      continue
    }
    covered.set(claim.file, Math.max(covered.get(claim.file) ?? -1, claim.seq))
  }
  return { problems, covered }
}
