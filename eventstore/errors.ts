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
