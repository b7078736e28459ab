import { pino, type Logger } from 'pino'

interface HttpLine {
  msg: string
  rid?: string
  path?: string
  status?: number | 'aborted'
}

/**
 * A device logger that keeps the gateway's request log (debug level: one `http` line per answer,
 * with its request id) in memory, so that a test can tell which request ids were answered with
 * what: the client never sees the id, the journal records it.
 */
export function requestLog(): { logger: Logger; rids(path: string, status: number): string[] } {
  const lines: HttpLine[] = []
  const logger = pino(
    { level: 'debug' },
    {
      write: (line: string) => {
        const parsed = JSON.parse(line) as HttpLine
        if (parsed.msg === 'http') lines.push(parsed)
      },
    },
  )
  return {
    logger,
    rids: (path, status) => lines.filter((l) => l.path === path && l.status === status).map((l) => l.rid!),
  }
}
