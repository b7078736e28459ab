// Checks a set of segment files with only the log public key: each file on its own (through
// `checkFile`, so that the device can remember checks), then the links between neighbours, that
// every file was ended by a seal, and the signed heads given. Pure: the primitives come from the
// caller (verify-journal.ts for node, the management app its own).

import { bytesEqual } from './bytes-equal.js'
import { isTerminalSeal } from './extension-data.js'
import { headAfter } from './head-after.js'
import type { JournalCrypto } from './journal-crypto.js'
import { readLines } from './read-lines.js'
import { checkHeads, type HeadClaim } from './signed-heads.js'
import type { SegmentCheck } from './segment-check.js'
import type { JournalFile, VerifyProblem, VerifyResult, VerifySummary } from '../protocol/browser.js'

export interface VerifyOptions {
  /**
   * The newest file need not end with a close, rotate or recovered seal (a running device's). Its
   * records after the last seal are still unverified, each a problem, unless a signed head covers them.
   */
  allowOpenTail?: boolean
  /**
   * Records after the newest file's last seal are taken without a seal or signed head: only for
   * the device reading the journal its own writer is writing.
   */
  trustOpenTail?: boolean
  /** The first file may link to files not given (older files deleted); otherwise that is a problem. */
  allowMissingStart?: boolean
  /** Heads the device signed: each must verify and be reached by the files; it covers the records up to it. */
  heads?: HeadClaim[]
}

const SEGMENT_ID = /^[0-9a-f]{8}$/
const hex = (n: number): string => n.toString(16)

/** Checks one file on its own, e.g. checkSegment under the log key. */
export type FileChecker = (file: JournalFile) => Readonly<SegmentCheck>

export function checkJournal(
  files: JournalFile[],
  publicKey: Uint8Array,
  opts: VerifyOptions,
  crypto: JournalCrypto,
  checkFile: FileChecker,
): VerifyResult {
  const sorted = [...files].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const problems: VerifyProblem[] = []
  const summary: VerifySummary = { files: 0, records: 0, seals: 0, firstTime: undefined, lastTime: undefined }
  let previous: { check: Readonly<SegmentCheck>; bytes: Uint8Array } | undefined
  const heads = opts.heads?.length
    ? checkHeads(opts.heads, sorted, crypto.ed25519Verifier(publicKey), crypto)
    : undefined

  sorted.forEach((file, i) => {
    if (!SEGMENT_ID.test(file.id)) {
      problems.push({ file: file.id, message: 'file id is not 8 lowercase hex chars' })
      return
    }
    if (previous?.check.id === file.id) {
      problems.push({ file: file.id, message: 'file appears twice in the set' })
      return
    }
    const check = checkFile(file)
    const found = [...check.problems]
    const linkIssue = previous ? linkProblem(check, previous.check, previous.bytes, crypto) : startProblem(check, opts)
    if (linkIssue) found.push(linkIssue)
    if (check.records >= 2 && !isTerminalSeal(check.lastSeal)) {
      if (opts.allowOpenTail && i === sorted.length - 1) {
        summary.openTail = { file: file.id, records: check.unsealed }
        if (!opts.trustOpenTail) found.push(...uncovered(file, check, heads?.covered.get(file.id)))
      } else found.push({ file: file.id, seq: check.lastSeq, line: check.lines, message: endProblem(check) })
    }
    problems.push(...found.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)))

    summary.files++
    summary.records += check.records
    summary.seals += check.seals
    summary.firstTime ??= check.firstTime
    summary.lastTime = check.lastTime ?? summary.lastTime
    previous = { check, bytes: file.bytes }
  })
  if (heads) problems.push(...heads.problems)
  return { ok: problems.length === 0, problems, summary }
}

/** The first file given links to an older one: older files are missing, unless the auditor allows it. */
function startProblem(check: SegmentCheck, opts: VerifyOptions): VerifyProblem | undefined {
  if (opts.allowMissingStart || !check.link || check.link.prev === null) return undefined
  return {
    file: check.id,
    seq: 1,
    line: check.linkLine,
    message: `LINK names previous file ${check.link.prev}, which is not given: older files are missing`,
  }
}

/**
 * The records after the open file's last seal that no signed head covers: the file key K is in
 * the file, so anyone holding the file could have written them; only a signature vouches for a record.
 */
function uncovered(file: JournalFile, check: SegmentCheck, coveredSeq = -1): VerifyProblem[] {
  const from = Math.max((check.lastSeq ?? -1) - check.unsealed, coveredSeq) + 1
  const found: VerifyProblem[] = []
  for (const line of readLines(file.bytes)) {
    if (line.kind === 'record' && line.record.seq >= from)
      found.push({
        file: file.id,
        seq: line.record.seq,
        line: line.line,
        message: 'unverified: no seal or signed head covers this record (give the signed head that reaches it)',
      })
  }
  return found
}

function endProblem(check: SegmentCheck): string {
  const ending =
    check.lastSeal === 'periodic' ? 'ends at a periodic seal' : `ends with ${check.unsealed} unsealed record(s)`
  return `file ${ending} and no close, rotate or recovered seal: records were removed from its end, or it is still open`
}

function linkProblem(
  check: SegmentCheck,
  prev: SegmentCheck,
  prevBytes: Uint8Array,
  crypto: JournalCrypto,
): VerifyProblem | undefined {
  const link = check.link
  // A missing or malformed LINK is already one of the file's own problems.
  if (!link) return undefined
  const at = { file: check.id, seq: 1, line: check.linkLine }
  if (link.prev !== prev.id) {
    const names = link.prev === null ? 'no previous file' : `previous file ${link.prev}`
    const missing = link.prev !== null && link.prev > prev.id ? `: ${link.prev} is missing` : ''
    return { ...at, message: `LINK names ${names}, but the file before it in the set is ${prev.id}${missing}` }
  }
  if (link.seq === prev.lastSeq && link.head && bytesEqual(link.head, prev.head)) return undefined
  if (link.seq === null || link.head === null) {
    return { ...at, message: `LINK vouches for nothing in ${prev.id}: it was found broken when this file was opened` }
  }
  if (prev.lastSeq !== undefined && link.seq > prev.lastSeq) {
    return {
      ...at,
      message:
        `LINK says ${prev.id} ends at seq ${hex(link.seq)}, but it ends at seq ${hex(prev.lastSeq)}: ` +
        'records were removed from its end',
    }
  }
  if (link.seq !== prev.lastSeq) {
    const head = headAfter(prev.id, prevBytes, link.seq, crypto)
    if (head && bytesEqual(head, link.head)) {
      return {
        ...at,
        message:
          `LINK covers ${prev.id} only up to seq ${hex(link.seq)}: ` +
          'its later records were found broken when this file was opened, or were added afterwards',
      }
    }
  }
  return { ...at, message: `LINK head does not match the chain of ${prev.id}` }
}
