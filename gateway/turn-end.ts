/**
 * Resolves in the check phase of the event-loop turn it is asked in: after the poll phase, so after
 * every read uWS takes in it. One Immediate for all the requests of a turn, not one each.
 */
export class TurnEnd {
  private pending: Promise<void> | undefined

  next(): Promise<void> {
    this.pending ??= new Promise((resolve) =>
      setImmediate(() => {
        this.pending = undefined
        resolve()
      }),
    )
    return this.pending
  }
}
