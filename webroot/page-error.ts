// A failure that the page tells the owner in its own words, shown as it is: no device refusal
// (those are the client's typed errors, client/errors.ts), no bug.

export class PageError extends Error {
  override readonly name: string = 'PageError'
}
