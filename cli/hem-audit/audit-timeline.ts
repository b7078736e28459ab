// hem-audit timeline: what happened on the device, one line per event.

import { parseOptions } from '../index.js'
import { formatTimelineEvent, parseTime, readAuditJournal, timeline, type TimelineFilter } from '../../audit/index.js'
import {
  audited,
  INPUT_HELP,
  inputOptions,
  loadInput,
  verifyOptions,
  type InputLoader,
  type AuditIo,
} from './audit-input.js'
import { usage } from './audit-finding.js'
import { parseLogType } from '../../protocol/index.js'

export const TIMELINE_USAGE =
  'Usage: hem-audit timeline [--key BASE64 | --key-file FILE] ' +
  `[--allow-open] [--head FILE] [--json] [--all]
                         [--type NAME|NUMBER]... [--subject S] [--since TIME] [--until TIME] FILES|DIR...

Verifies the files (and refuses them if they do not verify), then tells what happened, one line
per record: time, FILE:SEQ (SEQ in hex), who (user, master, an external authenticator's id, or
device), what, the result with the HTTP status of the request, and the facts of the record
(kid, scope, request id...). Secrets are never in the journal, and data this tool does not know
is never printed. Records no seal or signed head covers are unverified: the files are then
refused, and nothing in them is told.

${INPUT_HELP}
  --json            one JSON object per line (JSON Lines)
  --all             also the journal's own records: file key, file link, seals
  --type T          only records of this type: a name (KEY_GENERATION, any case) or a number
                    (decimal or 0x hex); repeat for several
  --subject S       only records of this subject: U, M or an ExtAuth id ('' for the device's own)
  --since TIME      only records at or after TIME: Unix seconds or ISO 8601 with a zone
  --until TIME      only records at or before TIME
  -h, --help        show this help

Exit status: 0 told, 1 the files do not verify, 2 usage error.
`

export async function runTimeline(args: string[], io: AuditIo, load: InputLoader = loadInput): Promise<number> {
  const { values, positionals } = parseOptions({
    args,
    allowPositionals: true,
    options: {
      ...inputOptions,
      all: { type: 'boolean' },
      type: { type: 'string', multiple: true },
      subject: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
    },
  })
  const filter: TimelineFilter = {
    all: values.all ?? false,
    ...(values.type
      ? {
          types: values.type.map(
            (t) => parseLogType(t) ?? usage(`--type: '${t.slice(0, 64)}' is no log type name or number`),
          ),
        }
      : {}),
    ...(values.subject !== undefined ? { subject: values.subject } : {}),
    ...(values.since !== undefined ? { since: time('--since', values.since) } : {}),
    ...(values.until !== undefined ? { until: time('--until', values.until) } : {}),
  }
  const input = await load(values, positionals, io.env ?? {})
  const journal = audited(input.names, () =>
    readAuditJournal(input.files, input.publicKey, verifyOptions(values, input)),
  )
  const events = timeline(journal.records, filter)
  const lines = events.map((event) => (values.json ? JSON.stringify(event) : formatTimelineEvent(event)))
  io.stdout.write(lines.map((line) => `${line}\n`).join(''))
  return 0
}

function time(option: string, text: string): number {
  return (
    parseTime(text) ??
    usage(`${option}: '${text.slice(0, 64)}' is neither Unix seconds nor an ISO 8601 date or date-time with a zone`)
  )
}
