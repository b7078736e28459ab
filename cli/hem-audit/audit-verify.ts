// hem-audit verify: are the files what the device wrote, and how do they hang together.

import { parseOptions } from '../index.js'
import {
  formatFinding,
  INPUT_HELP,
  inputOptions,
  iso,
  loadInput,
  type InputLoader,
  type AuditIo,
} from './audit-input.js'
import {
  type BootEnd,
  type BootSpan,
  journalLayout,
  type JournalLayout,
  verifyJournal,
} from '../../eventstore/index.js'
import type { VerifyResult } from '../../protocol/index.js'

export const VERIFY_USAGE =
  'Usage: hem-audit verify [--key BASE64 | --key-file FILE] ' +
  `[--allow-open] [--json] FILES|DIR...

Verifies journal files with the log public key (GET /api/logger/key): every line's MAC, the
signed file keys, the hash chain, every seal and the links between files. A DIR means every
*.log file in it. Problems print as FILE:seq N: message (N in hex, as in the file). The summary
tells the boots the files hold and the gaps in them: files whose LINK names a file that is not
among those given (a gap before the first file means older files are missing, e.g. deleted;
a gap between files is also a problem).

${INPUT_HELP}
  --json            print the result as JSON
  -h, --help        show this help

Exit status: 0 verified, 1 problems found, 2 usage error.
`

export async function runVerify(args: string[], io: AuditIo, load: InputLoader = loadInput): Promise<number> {
  const { values, positionals } = parseOptions({ args, allowPositionals: true, options: inputOptions })
  const { publicKey, files, names } = await load(values, positionals, io.env ?? {})
  const result = verifyJournal(files, publicKey, { allowOpenTail: values['allow-open'] ?? false })
  const layout = journalLayout(files)
  io.stdout.write(values.json ? renderJson(result, layout, names) : renderText(result, layout, names))
  return result.ok ? 0 : 1
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

function renderText(result: VerifyResult, layout: JournalLayout, names: Map<string, string>): string {
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
  if (summary.openTail) {
    const name = names.get(summary.openTail.file) ?? summary.openTail.file
    lines.push(`open: ${name} ends with ${summary.openTail.records} unsealed record(s)`)
  }
  for (const problem of result.problems) lines.push(formatFinding(problem, names))
  lines.push(result.ok ? 'OK' : `FAILED: ${result.problems.length} problem(s)`)
  return `${lines.join('\n')}\n`
}

function renderJson(result: VerifyResult, layout: JournalLayout, names: Map<string, string>): string {
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
    },
    problems,
  }
  return `${JSON.stringify(json, null, 2)}\n`
}
