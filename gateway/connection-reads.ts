import type { HttpResponse } from 'uWebSockets.js'

/**
 * Pauses and resumes the reads of one request's connection. uWS closes a connection whose next
 * request it parses while an answer is pending (pipelining), so once a request is all in, the
 * next one is held in the socket until the answer is out (`hold`, `release`). Every pause and
 * resume goes through here: uWS's resume() on a response never paused stops its reads for good.
 */
export class ConnectionReads {
  private paused = false
  private held = false

  constructor(
    private readonly res: Pick<HttpResponse, 'pause' | 'resume'>,
    /** False once uWS must not be touched: the response ended or the client is gone. */
    private readonly live: () => boolean,
  ) {}

  /** A body's backpressure: no more of it until `resume`. */
  pause(): void {
    if (this.paused || !this.live()) return
    this.paused = true
    this.res.pause()
  }

  /** More of the body is wanted; a no-op once the request is all in and the next one is held. */
  resume(): void {
    if (this.held) return
    this.release()
  }

  /** The request is all in: whatever follows it waits in the socket. */
  hold(): void {
    this.held = true
    this.pause()
  }

  /** The answer goes out now (or the rest of a refused body is dropped): reads go on. */
  release(): void {
    this.held = false
    if (!this.paused || !this.live()) return
    this.paused = false
    this.res.resume()
  }
}
