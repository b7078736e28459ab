/** A timed exchange did not end the way it must: its time measures nothing. */
export class TimingError extends Error {
  override readonly name = 'TimingError'
}
