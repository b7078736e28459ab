// How a set of segment files hangs together: which files make up each boot of the device, and
// where the chain of files is interrupted because files are missing from the set.

import { isTerminalSeal, parseLinkData, parseSealData } from './extension-data.js'
import { readLines } from './read-lines.js'
import { decodeRecordData } from './record-data.js'
import { type JournalFile, LogType, type RecordLine, type SealReason } from '../protocol/index.js'

/**
 * One run of the device: the file opened at boot and the files it rotated into. `end` is the
 * terminal seal of its last file (`rotate` when the file it rotated into is missing), or `open`.
 */
export interface BootSpan {
  files: string[]
  firstTime: number | undefined
  lastTime: number | undefined
  end: BootEnd
}

export type BootEnd = Exclude<SealReason, 'periodic'> | 'open'

/** A file whose LINK names a predecessor that is not the file before it in the set. */
export interface JournalGap {
  file: string
  /** The file the LINK names. */
  missing: string
  /** True when the gap is before the first file of the set (older files not given, or deleted). */
  atStart: boolean
}

export interface JournalLayout {
  boots: BootSpan[]
  gaps: JournalGap[]
}

interface Outline {
  id: string
  prev: string | null | undefined
  end: BootEnd
  firstTime: number | undefined
  lastTime: number | undefined
}

function outline(file: JournalFile): Outline {
  const found: Outline = { id: file.id, prev: undefined, end: 'open', firstTime: undefined, lastTime: undefined }
  let last: RecordLine | undefined
  for (const line of readLines(file.bytes)) {
    if (line.kind !== 'record') continue
    const r = line.record
    if (r.seq === 1 && r.type === LogType.LINK) found.prev = parseLinkData(decoded(r))?.prev
    found.firstTime ??= r.time
    found.lastTime = r.time
    last = r
  }
  const reason = last?.type === LogType.SEAL ? parseSealData(decoded(last))?.reason : undefined
  if (isTerminalSeal(reason)) found.end = reason as BootEnd
  return found
}

function decoded(record: RecordLine): Record<string, unknown> | undefined {
  try {
    return decodeRecordData(record)
  } catch {
    return undefined
  }
}

/**
 * A file continues the boot of the file before it when it links to that file and that file was
 * ended by a `rotate` seal; any other file was opened at a boot. Files need not verify: what
 * cannot be read starts a boot of its own.
 */
export function journalLayout(files: JournalFile[]): JournalLayout {
  const sorted = [...new Map(files.map((file) => [file.id, file])).values()].sort((a, b) =>
    a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
  )
  const boots: BootSpan[] = []
  const gaps: JournalGap[] = []
  let previous: Outline | undefined
  for (const file of sorted) {
    const current = outline(file)
    if (current.prev && current.prev !== previous?.id)
      gaps.push({ file: file.id, missing: current.prev, atStart: previous === undefined })
    const boot = boots.at(-1)
    if (boot && previous?.end === 'rotate' && current.prev === previous.id) {
      boot.files.push(current.id)
      boot.firstTime ??= current.firstTime
      boot.lastTime = current.lastTime ?? boot.lastTime
      boot.end = current.end
    } else {
      boots.push({ files: [current.id], firstTime: current.firstTime, lastTime: current.lastTime, end: current.end })
    }
    previous = current
  }
  return { boots, gaps }
}
