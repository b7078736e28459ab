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

export function checkSegment(
  id: string,
  bytes: Uint8Array,
  verify: Ed25519Verifier,
  crypto: JournalCrypto,
): SegmentCheck {
  const { chainStep, lineMac } = crypto
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
  let expectedSeq = 0
  let endedBy: SealReason | undefined
  let reportedAfterEnd = false
  let reportedChain = false
  let lastGoodSeal: number | undefined

  for (const entry of readLines(bytes)) {
    const before = check.head
    check.head = chainStep(before, entry.bytes)
    check.lines = entry.line
    if (entry.kind === 'comment') continue
    if (entry.kind === 'invalid') {
      check.problems.push({ file: id, line: entry.line, message: entry.error })
      continue
    }
    const r = entry.record
    const problem = (message: string): void =>
      void check.problems.push({ file: id, seq: r.seq, line: entry.line, message })
    const index = check.records++
    check.firstTime ??= r.time
    check.lastTime = r.time
    check.lastSeq = r.seq

    if (endedBy && !reportedAfterEnd) {
      reportedAfterEnd = true
      problem(`record after the file's ${endedBy} seal`)
    }
    if (r.seq !== expectedSeq) {
      problem(`seq ${hex(r.seq)} where ${hex(expectedSeq)} was expected: a record was removed, inserted or reordered`)
    }
    expectedSeq = r.seq + 1

    if (index === 0) checkKeyInit(r, check, verify, problem)
    else if (r.type === LogType.KEY_INIT) problem('KEY_INIT is only allowed as record 0')
    if (check.key && lineMac(check.key, r.signed) !== r.mac) problem('MAC does not match')

    if (index === 1) {
      if (r.type !== LogType.LINK) problem('record 1 must be LINK')
      else {
        check.link = tryDecode(r, parseLinkData)
        check.linkLine = entry.line
        if (!check.link) problem('LINK data is malformed')
      }
    } else if (r.type === LogType.LINK) problem('LINK is only allowed as record 1')

    if (r.type === LogType.SEAL) {
      const seal = tryDecode(r, parseSealData)
      if (!seal) problem('SEAL data is malformed')
      else {
        check.seals++
        if (!verify(sealMessage(id, r.seq, seal.head), seal.sig))
          problem('seal signature does not verify with the log key')
        else if (!bytesEqual(seal.head, before)) {
          // Every later seal fails too once the chain is off; the first one tells where to look.
          if (!reportedChain) {
            const since = lastGoodSeal === undefined ? 'the start of the file' : `the seal at seq ${hex(lastGoodSeal)}`
            problem(
              `seal does not match the chain: a line between ${since} and this seal ` +
                'was changed, inserted, removed or reordered',
            )
          }
          reportedChain = true
        } else if (!reportedChain) lastGoodSeal = r.seq
      }
      check.lastSeal = seal?.reason
      check.unsealed = 0
      check.sealHeads.set(r.seq, check.head)
      if (isTerminalSeal(seal?.reason)) endedBy ??= seal?.reason
    } else {
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

function checkKeyInit(r: RecordLine, check: SegmentCheck, verify: Ed25519Verifier, problem: (m: string) => void): void {
  if (r.type !== LogType.KEY_INIT || r.result !== 0) problem('record 0 must be KEY_INIT (type 0, result 0)')
  const key = fromBase64Url(r.subject)
  const signature = fromBase64Url(r.data)
  if (key?.length !== 32) return problem('KEY_INIT subject is not a 32-byte key')
  check.key = key
  if (signature?.length !== 64) return problem('KEY_INIT data is not a 64-byte signature')
  if (!verify(key, signature)) problem('KEY_INIT signature of the file key does not verify with the log key')
}
