// What the writer does at open with the files a previous run left behind.

import type { AppendHandle, JournalMedia } from '../hal/index.js'
import { checkSegmentOnce, prefetchChecks } from './checked-segments.js'
import { isTerminalSeal } from './extension-data.js'
import { formatProblem } from './format-problem.js'
import { commitSealed, type JournalAnchoring } from './journal-anchoring.js'
import { readLines } from './read-lines.js'
import type { SegmentCheck } from './segment-check.js'
import { SegmentWriter, type SegmentDeps } from './segment-writer.js'
import type { LinkData, RecoveryReport } from '../protocol/index.js'

export interface Recovered {
  report: RecoveryReport
  /** What the next file's LINK record says. */
  link: LinkData
  /** A file torn while being created, cut to nothing: the next file takes its id. */
  reuseId: string | undefined
}

interface Tail {
  id: string
  handle: AppendHandle
  bytes: Uint8Array
}

const NEWLINE = 0x0a

/**
 * Has every file checked on worker threads (prefetchChecks), for a process that reads the whole
 * history next: the older ones on the thread started ahead, the newest on one of its own, so that
 * the main thread is free (to load the services' code) and neither check waits for the other. A
 * worker's small heap also checks faster than the main thread's, whose collections grow with its
 * modules. Resolves with the newest file's check in the memo, for recoverJournal to wait for.
 */
export async function prefetchFiles(media: JournalMedia, publicKey: Uint8Array): Promise<{ newest: Promise<void> }> {
  const files = await Promise.all((await media.list()).map(async (id) => ({ id, bytes: await media.read(id) })))
  const newest = files.pop()
  void prefetchChecks(files, publicKey)
  return { newest: newest ? prefetchChecks([newest], publicKey) : Promise.resolve() }
}

/**
 * `prefetched`: the newest file's check on a worker (prefetchFiles), when one was started. With
 * `anchoring`, the files as found are checked against the enclave's anchor before recovery writes
 * anything, and the anchor moves around the recovered seal.
 */
export async function recoverJournal(
  media: JournalMedia,
  deps: SegmentDeps,
  prefetched?: Promise<void>,
  anchoring?: JournalAnchoring,
): Promise<Recovered> {
  const ids = await media.list()
  const listed = [...ids]
  const report: RecoveryReport = {
    previous: undefined,
    cutBytes: 0,
    sealedRecovered: false,
    intact: true,
    problems: [],
  }
  let reuseId: string | undefined
  let tail = await cutTornLine(media, ids.pop(), report)
  if (tail && !hasRecordLines(tail.bytes, 2)) {
    // Banner, KEY_INIT and LINK go in one append that never completed: nothing in the file was acknowledged.
    try {
      await tail.handle.truncate(0)
    } finally {
      await tail.handle.close()
    }
    report.cutBytes += tail.bytes.length
    reuseId = tail.id
    tail = await cutTornLine(media, ids.pop(), report)
  }
  const found = listed.filter((id) => id !== reuseId)
  if (!tail) {
    notIntact(report, await anchoring?.check(media, { ids: found, tail: undefined }), anchoring)
    return { report, link: { prev: null, head: null, seq: null }, reuseId }
  }
  try {
    // The worker's check is of the file as it was read: a torn line cut since, or a file torn at its
    // creation, is checked here.
    await prefetched
    const check = checkSegmentOnce(tail.id, tail.bytes, deps.signer.publicKey)
    const checked = { id: tail.id, bytes: tail.bytes, check }
    // Against the files as found: a recovered seal on a cut file must not hide the cut.
    const cut = await anchoring?.check(media, { ids: found, tail: checked })
    const link = await settle(tail, check, deps, report, anchoring)
    notIntact(report, cut, anchoring)
    return { report, link, reuseId }
  } finally {
    await tail.handle.close()
  }
}

function notIntact(report: RecoveryReport, problem: string | undefined, anchoring?: JournalAnchoring): void {
  if (anchoring?.migrated) report.anchorMigrated = anchoring.migrated
  if (problem === undefined) return
  report.intact = false
  report.problems.push(problem)
}

async function cutTornLine(
  media: JournalMedia,
  id: string | undefined,
  report: RecoveryReport,
): Promise<Tail | undefined> {
  if (id === undefined) return undefined
  const handle = await media.open(id)
  try {
    const bytes = await media.read(id)
    const end = bytes.lastIndexOf(NEWLINE) + 1
    if (end < bytes.length) await handle.truncate(end)
    report.cutBytes += bytes.length - end
    return { id, handle, bytes: bytes.subarray(0, end) }
  } catch (err) {
    await handle.close().catch(() => undefined)
    throw err
  }
}

/** Whether `bytes` hold `count` lines that are no comments; read only that far (the file is checked whole next). */
function hasRecordLines(bytes: Uint8Array, count: number): boolean {
  let found = 0
  for (const line of readLines(bytes)) if (line.kind !== 'comment' && ++found === count) return true
  return false
}

/** Checks the newest file, seals it as recovered when it was left open, and says what to link to. */
async function settle(
  tail: Tail,
  check: Readonly<SegmentCheck>,
  deps: SegmentDeps,
  report: RecoveryReport,
  anchoring: JournalAnchoring | undefined,
): Promise<LinkData> {
  report.previous = tail.id
  if (check.problems.length > 0 || !check.key || check.lastSeq === undefined) {
    report.intact = false
    report.problems = check.problems.map((p) => formatProblem(p))
    return { prev: tail.id, head: check.verified?.head ?? null, seq: check.verified?.seq ?? null }
  }
  if (isTerminalSeal(check.lastSeal)) return { prev: tail.id, head: check.head, seq: check.lastSeq }
  const position = { seq: check.lastSeq + 1, head: check.head, unsealed: check.unsealed }
  const writer = new SegmentWriter(tail.id, tail.handle, check.key, position, deps)
  const batch = writer.begin()
  writer.addSeal(batch, 'recovered')
  await commitSealed(writer, batch, anchoring)
  report.sealedRecovered = true
  return { prev: tail.id, head: writer.head, seq: writer.lastSeq }
}
