// What the writer does at open with the files a previous run left behind.

import type { AppendHandle, JournalMedia } from '../hal/index.js'
import { checkSegmentOnce, prefetchChecks } from './checked-segments.js'
import { isTerminalSeal } from './extension-data.js'
import { formatProblem } from './format-problem.js'
import { readLines } from './read-lines.js'
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

export async function recoverJournal(media: JournalMedia, deps: SegmentDeps, prefetch = false): Promise<Recovered> {
  const ids = await media.list()
  const report: RecoveryReport = {
    previous: undefined,
    cutBytes: 0,
    sealedRecovered: false,
    intact: true,
    problems: [],
  }
  let reuseId: string | undefined
  let tail = await cutTornLine(media, ids.pop(), report)
  if (tail && recordLines(tail.bytes) < 2) {
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
  if (!tail) return { report, link: { prev: null, head: null, seq: null }, reuseId }
  // The history read next checks the older files: on the other core while this one checks the tail.
  if (prefetch)
    prefetchChecks(
      await Promise.all(ids.map(async (id) => ({ id, bytes: await media.read(id) }))),
      deps.signer.publicKey,
    )
  try {
    return { report, link: await settle(tail, deps, report), reuseId }
  } finally {
    await tail.handle.close()
  }
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

function recordLines(bytes: Uint8Array): number {
  let count = 0
  for (const line of readLines(bytes)) if (line.kind !== 'comment') count++
  return count
}

/** Checks the newest file, seals it as recovered when it was left open, and says what to link to. */
async function settle(tail: Tail, deps: SegmentDeps, report: RecoveryReport): Promise<LinkData> {
  report.previous = tail.id
  const check = checkSegmentOnce(tail.id, tail.bytes, deps.signer.publicKey)
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
  await writer.commit(batch)
  report.sealedRecovered = true
  return { prev: tail.id, head: writer.head, seq: writer.lastSeq }
}
