// hem-audit verify: are the files what the device wrote, and how do they hang together.

import { parseOptions } from '../index.js'
import {
  formatFinding,
  INPUT_HELP,
  inputOptions,
  iso,
  loadInput,
  verifyOptions,
  type InputLoader,
  type AuditIo,
} from './audit-input.js'
import {
  type BootEnd,
  type BootSpan,
  journalLayout,
  type JournalLayout,
  readLines,
  verifyJournal,
} from '../../eventstore/index.js'
import { type JournalFile, LogResult, LogType, type VerifyResult } from '../../protocol/index.js'
import { nonSecureLine, type NonSecureState, nonSecureStates } from './non-secure-states.js'
import { recordData } from './record-data.js'

export const VERIFY_USAGE =
  'Usage: hem-audit verify [--key BASE64 | --key-file FILE] ' +
  `[--allow-open] [--head FILE|-] [--allow-missing-start] [--json] FILES|DIR...

Verifies journal files with the log public key (GET /api/logger/key): every line's MAC, the
signed file keys, the hash chain, every seal and the links between files. A DIR means every
*.log file in it. Problems print as FILE:seq N: message (N in hex, as in the file). The summary
tells the boots the files hold and the gaps in them: files whose LINK names a file that is not
among those given. A gap between files is a problem; so is a gap before the first file (older
files missing) unless --allow-missing-start, which then shows the journal's records of the
owner deleting log files. Every record must be covered by a seal or a signed head: a record
after the newest file's last seal that no signed head covers is unverified, a problem. With
--head, files that stop short of the signed head's record were cut at their end.

${INPUT_HELP}
  --json            print the result as JSON
  -h, --help        show this help

Files that verify but hold records of the device raising a fail state (NON_SECURE_STATE: a
tamper it found, a failed self-test, a lock) print one line each and end with
"OK, with N non-secure state record(s)".

Exit status: 0 verified, 1 problems found, 2 usage error, 6 verified, but the device recorded a
non-secure state.
`

/**
 * The exit status of files that verify but hold NON_SECURE_STATE records raising a fail state: 6,
 * so that it means the same from hemctl logs verify, whose 3 to 5 are its own.
 */
export const EXIT_NON_SECURE = 6

export async function runVerify(args: string[], io: AuditIo, load: InputLoader = loadInput): Promise<number> {
  const { values, positionals } = parseOptions({ args, allowPositionals: true, options: inputOptions })
  const input = await load(values, positionals, io.env ?? {})
  const { files, names } = input
  const result = verifyJournal(files, input.publicKey, verifyOptions(values, input))
  const layout = journalLayout(files)
  const deletions = layout.gaps.some((gap) => gap.atStart) ? ownerDeletions(files, result) : undefined
  const told = { layout, names, deletions, nonSecure: nonSecureStates(files, result) }
  io.stdout.write(values.json ? renderJson(result, told) : renderText(result, told))
  if (!result.ok) return 1
  return told.nonSecure.length > 0 ? EXIT_NON_SECURE : 0
}

/** What verify tells besides the verifier's result. */
interface Told {
  layout: JournalLayout
  names: Map<string, string>
  deletions: Deletion[] | undefined
  nonSecure: NonSecureState[]
}

interface Deletion {
  file: string
  seq: number
  time: number
  subject: string
  /** The log file deleted, as the record names it. */
  deleted: string | undefined
}

/** The journal's records of the owner deleting log files (LOGGER_DELETE_LOG, OK), read only from files that verify. */
function ownerDeletions(files: JournalFile[], result: VerifyResult): Deletion[] {
  const bad = new Set(result.problems.map((p) => p.file))
  const found: Deletion[] = []
  for (const file of files) {
    if (bad.has(file.id)) continue
    for (const line of readLines(file.bytes)) {
      if (line.kind !== 'record') continue
      const { seq, time, type, result: outcome, subject } = line.record
      if (type !== LogType.LOGGER_DELETE_LOG || outcome !== LogResult.OK) continue
      const id = recordData(line.record)?.id
      found.push({ file: file.id, seq, time, subject, deleted: typeof id === 'string' ? id.slice(0, 64) : undefined })
    }
  }
  return found
}

const ENDINGS: Record<BootEnd, string> = {
  close: 'closed',
  recovered: 'crashed (sealed as recovered at the next boot)',
  rotate: 'rotated into a file not given',
  open: 'open',
}

function bootLine(span: BootSpan, index: number): string {
  const files =
    span.files.length === 1 ? span.files[0] : `${span.files[0]}..${span.files.at(-1)} (${span.files.length} files)`
  const times = `${iso(span.firstTime) ?? '-'} to ${iso(span.lastTime) ?? '-'}`
  return `  boot ${index + 1}: ${files}, ${times}, ${ENDINGS[span.end]}`
}

function renderText(result: VerifyResult, { layout, names, deletions, nonSecure }: Told): string {
  const { summary } = result
  const lines = [
    `files: ${summary.files}, records: ${summary.records}, seals: ${summary.seals}`,
    `first record: ${iso(summary.firstTime) ?? '-'}, last record: ${iso(summary.lastTime) ?? '-'}`,
    `boots: ${layout.boots.length}`,
    ...layout.boots.map(bootLine),
  ]
  for (const gap of layout.gaps) {
    const why = gap.atStart ? 'older files are missing' : 'files between are missing'
    lines.push(
      `gap: ${names.get(gap.file) ?? gap.file} links to ${gap.missing}, which is not among the files given: ${why}`,
    )
  }
  if (deletions?.length === 0) lines.push('deleted by the owner: no record of it in these files')
  for (const d of deletions ?? []) {
    const who = d.subject === '' ? 'the device' : d.subject
    const what = d.deleted === undefined ? 'log files' : `log file ${d.deleted}`
    lines.push(
      `deleted by the owner: ${what}, by ${who} at ${iso(d.time)} ` +
        `(${names.get(d.file) ?? d.file}:seq ${d.seq.toString(16)})`,
    )
  }
  if (summary.openTail) {
    const name = names.get(summary.openTail.file) ?? summary.openTail.file
    lines.push(`open: ${name} ends with ${summary.openTail.records} unsealed record(s)`)
  }
  for (const state of nonSecure) lines.push(nonSecureLine(state, names))
  for (const problem of result.problems) lines.push(formatFinding(problem, names))
  if (!result.ok) lines.push(`FAILED: ${result.problems.length} problem(s)`)
  else lines.push(nonSecure.length > 0 ? `OK, with ${nonSecure.length} non-secure state record(s)` : 'OK')
  return `${lines.join('\n')}\n`
}

function renderJson(result: VerifyResult, { layout, names, deletions, nonSecure }: Told): string {
  const { summary } = result
  const problems = result.problems.map((p) => ({ ...p, path: names.get(p.file) ?? p.file }))
  const boots = layout.boots.map((span) => ({
    ...span,
    firstTimeIso: iso(span.firstTime),
    lastTimeIso: iso(span.lastTime),
  }))
  const json = {
    ok: result.ok,
    summary: {
      ...summary,
      firstTimeIso: iso(summary.firstTime),
      lastTimeIso: iso(summary.lastTime),
      boots,
      gaps: layout.gaps,
      ...(deletions ? { deletions } : {}),
      nonSecure: nonSecure.map((state) => ({ ...state, timeIso: iso(state.time) })),
    },
    problems,
  }
  return `${JSON.stringify(json, null, 2)}\n`
}
