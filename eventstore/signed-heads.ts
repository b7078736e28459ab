// Signed heads against the files: a head the device signed (GET /api/logger/key, a stream's
// batch) says the journal reached that record with that chain head, so files that stop short of
// it were cut, and it vouches for the records up to it that no seal covers yet.

import { bytesEqual } from './bytes-equal.js'
import { headAfter } from './head-after.js'
import type { Ed25519Verifier, JournalCrypto } from './journal-crypto.js'
import { parseLinkData } from './extension-data.js'
import { findRecordLine } from './read-lines.js'
import { decodeRecordData } from './record-data.js'
import { headMessage } from './seal-message.js'
import { LogType, type JournalFile, type VerifyProblem } from '../protocol/browser.js'

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
      problems.push({ ...at, message: `${claim.source} is at ${where}, but ${missingFile(claim.file, files)}` })
      continue
    }
    const head = headAfter(claim.file, file.bytes, claim.seq, crypto)
    if (!head) {
      const message =
        `${claim.source} is at ${where}, but the file has no such record: records were removed from its end, ` +
        'or the journal went back to an older state (its data rolled back)'
      problems.push({ ...at, message })
      continue
    }
    if (claim.head && !bytesEqual(claim.head, head)) {
      // Ids are opening times in seconds, so a journal rolled back and written on can open a file
      // under the id the claim names: the bytes cannot tell that from an edit.
      const message =
        `the chain after ${where} is not the one ${claim.source} names: the file was changed, or the journal ` +
        'went back to an older state (its data rolled back) and wrote on under the same file id'
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

/**
 * Why a claim's file is not given: the files end before it; or the next file links past it (a
 * file left out or deleted); or the next file links to an older one, so the journal never went on
 * from the claim: it went back to before it (a device whose data was rolled back wrote on from there).
 */
function missingFile(id: string, files: JournalFile[]): string {
  const next = files.find((f) => f.id > id)
  if (!next) {
    const newest = files.at(-1)?.id ?? 'none'
    return `the files end before it (the newest given is ${newest}): the journal was cut at its end or went back`
  }
  const prev = linkedFile(next)
  if (prev === undefined || prev >= id) return `file ${id} is not among the files given`
  return (
    `file ${next.id}, the next given, links to ${prev}, before it: the journal went back to an older state ` +
    '(its data rolled back) and wrote on from there'
  )
}

function linkedFile(file: JournalFile): string | undefined {
  const link = findRecordLine(file.bytes, 1, () => undefined)
  if (link?.record.type !== LogType.LINK) return undefined
  try {
    return parseLinkData(decodeRecordData(link.record))?.prev ?? undefined
  } catch {
    return undefined
  }
}
