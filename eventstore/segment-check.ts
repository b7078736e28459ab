// Checks one segment file on its own: syntax, seq, KEY_INIT, MACs, LINK shape, chain and seals.
// Checks across files (links, a missing end seal) belong to verifyJournal.

import { fromBase64Url } from './from-base64url.js'
import { bytesEqual } from './bytes-equal.js'
import { isTerminalSeal, parseLinkData, parseSealData } from './extension-data.js'
import type { Ed25519Verifier, JournalCrypto } from './journal-crypto.js'
import { readLines } from './read-lines.js'
import { decodeRecordData } from './record-data.js'
import { sealMessage } from './seal-message.js'
import { LogType, type LinkData, type RecordLine, type SealReason, type VerifyProblem } from '../protocol/browser.js'

export interface SegmentCheck {
  id: string
  /** In line order. */
  problems: VerifyProblem[]
  records: number
  seals: number
  firstTime: number | undefined
  lastTime: number | undefined
  /** The file key K from record 0, when it decodes. */
  key: Uint8Array | undefined
  link: LinkData | undefined
  linkLine: number | undefined
  lastSeq: number | undefined
  lines: number
  /** Chain head over every line of the file. */
  head: Uint8Array
  /** Last record (and head after it) before the first problem. */
  verified: { seq: number; head: Uint8Array } | undefined
  /** Reason of the last record when it is a seal. */
  lastSeal: SealReason | undefined
  /** Records after the last seal. */
  unsealed: number
  /** The chain head after each seal's line, by the seal's seq: where an anchor in the enclave points. */
  sealHeads: Map<number, Uint8Array>
}

const hex = (n: number): string => n.toString(16)

function tryDecode<T>(
  record: RecordLine,
  parse: (data: Record<string, unknown> | undefined) => T | undefined,
): T | undefined {
  try {
    return parse(decodeRecordData(record))
  } catch {
    return undefined
  }
}

/** What the walk through a file's records carries from one record to the next. */
interface Walk {
  expectedSeq: number
  endedBy: SealReason | undefined
  reportedAfterEnd: boolean
  reportedChain: boolean
  lastGoodSeal: number | undefined
}

type Problem = (message: string) => void

export function checkSegment(
  id: string,
  bytes: Uint8Array,
  verify: Ed25519Verifier,
  crypto: JournalCrypto,
): SegmentCheck {
  const check: SegmentCheck = {
    id,
    problems: [],
    records: 0,
    seals: 0,
    firstTime: undefined,
    lastTime: undefined,
    key: undefined,
    link: undefined,
    linkLine: undefined,
    lastSeq: undefined,
    lines: 0,
    head: crypto.chainStart(id),
    verified: undefined,
    lastSeal: undefined,
    unsealed: 0,
    sealHeads: new Map(),
  }
  const walk: Walk = {
    expectedSeq: 0,
    endedBy: undefined,
    reportedAfterEnd: false,
    reportedChain: false,
    lastGoodSeal: undefined,
  }
  for (const entry of readLines(bytes)) {
    const before = check.head
    check.head = crypto.chainStep(before, entry.bytes)
    check.lines = entry.line
    if (entry.kind === 'comment') continue
    if (entry.kind === 'invalid') {
      check.problems.push({ file: id, line: entry.line, message: entry.error })
      continue
    }
    const r = entry.record
    const problem: Problem = (message) => void check.problems.push({ file: id, seq: r.seq, line: entry.line, message })
    checkRecord(r, entry.line, check, walk, verify, crypto, problem)
    if (r.type === LogType.SEAL) checkSeal(r, before, check, walk, verify, problem)
    else {
      check.lastSeal = undefined
      check.unsealed++
    }
    if (check.problems.length === 0) check.verified = { seq: r.seq, head: check.head }
  }

  const end = { file: id, line: Math.max(check.lines, 1) }
  if (check.records === 0) check.problems.push({ ...end, message: 'file has no records' })
  else if (check.records === 1) check.problems.push({ ...end, message: 'file ends before its LINK record' })
  return check
}

/** A record's place in the file: after no end seal, its seq, KEY_INIT as record 0, its MAC, LINK as record 1. */
function checkRecord(
  r: RecordLine,
  line: number,
  check: SegmentCheck,
  walk: Walk,
  verify: Ed25519Verifier,
  crypto: JournalCrypto,
  problem: Problem,
): void {
  const index = check.records++
  check.firstTime ??= r.time
  check.lastTime = r.time
  check.lastSeq = r.seq

  if (walk.endedBy && !walk.reportedAfterEnd) {
    walk.reportedAfterEnd = true
    problem(`record after the file's ${walk.endedBy} seal`)
  }
  if (r.seq !== walk.expectedSeq) {
    problem(
      `seq ${hex(r.seq)} where ${hex(walk.expectedSeq)} was expected: a record was removed, inserted or reordered`,
    )
  }
  walk.expectedSeq = r.seq + 1

  if (index === 0) checkKeyInit(r, check, verify, problem)
  else if (r.type === LogType.KEY_INIT) problem('KEY_INIT is only allowed as record 0')
  if (check.key && crypto.lineMac(check.key, r.signed) !== r.mac) problem('MAC does not match')

  if (index === 1) {
    if (r.type !== LogType.LINK) problem('record 1 must be LINK')
    else {
      check.link = tryDecode(r, parseLinkData)
      check.linkLine = line
      if (!check.link) problem('LINK data is malformed')
    }
  } else if (r.type === LogType.LINK) problem('LINK is only allowed as record 1')
}

/** A SEAL: its signature, and the chain head it signs against the one before its line. */
function checkSeal(
  r: RecordLine,
  before: Uint8Array,
  check: SegmentCheck,
  walk: Walk,
  verify: Ed25519Verifier,
  problem: Problem,
): void {
  const seal = tryDecode(r, parseSealData)
  if (!seal) problem('SEAL data is malformed')
  else {
    check.seals++
    if (!verify(sealMessage(check.id, r.seq, seal.head), seal.sig))
      problem('seal signature does not verify with the log key')
    else if (!bytesEqual(seal.head, before)) {
      // Every later seal fails too once the chain is off; the first one tells where to look.
      if (!walk.reportedChain) {
        const since =
          walk.lastGoodSeal === undefined ? 'the start of the file' : `the seal at seq ${hex(walk.lastGoodSeal)}`
        problem(
          `seal does not match the chain: a line between ${since} and this seal ` +
            'was changed, inserted, removed or reordered',
        )
      }
      walk.reportedChain = true
    } else if (!walk.reportedChain) walk.lastGoodSeal = r.seq
  }
  check.lastSeal = seal?.reason
  check.unsealed = 0
  check.sealHeads.set(r.seq, check.head)
  if (isTerminalSeal(seal?.reason)) walk.endedBy ??= seal?.reason
}

function checkKeyInit(r: RecordLine, check: SegmentCheck, verify: Ed25519Verifier, problem: (m: string) => void): void {
  if (r.type !== LogType.KEY_INIT || r.result !== 0) problem('record 0 must be KEY_INIT (type 0, result 0)')
  const key = fromBase64Url(r.subject)
  const signature = fromBase64Url(r.data)
  if (key?.length !== 32) return problem('KEY_INIT subject is not a 32-byte key')
  check.key = key
  if (signature?.length !== 64) return problem('KEY_INIT data is not a 64-byte signature')
  if (!verify(key, signature)) problem('KEY_INIT signature of the file key does not verify with the log key')
}
