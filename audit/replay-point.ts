// Where in a journal a replay stops: at a record (`FILEID:SEQ`, seq in hex as in the files) or at
// a moment (Unix seconds, or an ISO 8601 date or date-time with its zone).

/** A record, or a Unix time in seconds. */
export type ReplayPoint = { file: string; seq: number } | { time: number }

export class ReplayPointError extends Error {
  override readonly name = 'ReplayPointError'
}

const POSITION = /^([0-9a-f]{8}):([0-9a-f]{1,8})$/
const SECONDS = /^\d{1,12}$/
// A date-time without a zone would mean the reader's local time: it is refused, not guessed.
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/

export function parseReplayPoint(text: string): ReplayPoint {
  const position = POSITION.exec(text)
  if (position) return { file: position[1]!, seq: parseInt(position[2]!, 16) }
  const time = parseTime(text)
  if (time === undefined)
    throw new ReplayPointError(
      `'${text.slice(0, 64)}' is neither FILEID:SEQ (SEQ in hex), Unix seconds, ` +
        'nor an ISO 8601 date or date-time with a zone',
    )
  return { time }
}

/** Unix seconds, or an ISO 8601 date or date-time with a zone, in Unix seconds; undefined when it is neither. */
export function parseTime(text: string): number | undefined {
  if (SECONDS.test(text)) return Number(text)
  const ms = ISO.test(text) ? Date.parse(text) : NaN
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000)
}

/** `FILEID:SEQ`, or the time in ISO form. */
export function formatReplayPoint(point: ReplayPoint): string {
  return 'file' in point ? `${point.file}:${point.seq.toString(16)}` : new Date(point.time * 1000).toISOString()
}
