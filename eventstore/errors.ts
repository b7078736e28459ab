import { formatProblem } from './format-problem.js'
import type { VerifyProblem } from '../protocol/index.js'

/** The media could not durably store a batch; nothing of that batch counts as written. */
export class JournalWriteError extends Error {
  override readonly name = 'JournalWriteError'
  constructor(message: string, options: { cause: unknown }) {
    super(message, options)
  }
}

export class JournalClosedError extends Error {
  override readonly name = 'JournalClosedError'
  constructor() {
    super('the journal is closed')
  }
}

/** The files do not verify: nothing in them may be replayed. `problems` point at the bad places. */
export class TamperedJournalError extends Error {
  override readonly name = 'TamperedJournalError'
  constructor(readonly problems: VerifyProblem[]) {
    super(`the journal does not verify: ${problems.map((p) => formatProblem(p)).join('; ')}`)
  }
}

/**
 * Verified files that cannot be replayed: a record the machines
 * refuse (see `cause`), or a history that is not whole.
 */
export class JournalReplayError extends Error {
  override readonly name = 'JournalReplayError'
  constructor(
    readonly file: string,
    readonly seq: number | undefined,
    /** What is wrong, without the position. */
    readonly detail: string,
    options?: { cause: unknown },
  ) {
    super(formatProblem({ file, ...(seq !== undefined ? { seq } : {}), message: detail }), options)
  }
}
