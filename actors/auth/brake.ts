export interface LoginBrakeOptions {
  /** Every answer takes at least this long (ms); default 500. */
  baseMs?: number
  /** ...and at least this long once `threshold` failures in a row were recorded; default 1500. */
  slowMs?: number
  /** Default 3. */
  threshold?: number
}

/**
 * The brute-force brake of POST /api/auth/token, as policy only: the caller reads
 * minimumDuration() when an attempt starts, records its outcome, and answers no sooner than
 * that many milliseconds after the start. Attempts must be handled one at a time, or parallel
 * guesses would all start before the failures that should slow them are recorded.
 */
export class LoginBrake {
  readonly #baseMs: number
  readonly #slowMs: number
  readonly #threshold: number
  #failures = 0

  constructor(options: LoginBrakeOptions = {}) {
    this.#baseMs = options.baseMs ?? 500
    this.#slowMs = options.slowMs ?? 1500
    this.#threshold = options.threshold ?? 3
  }

  /** Milliseconds the current attempt's answer must take at least. */
  minimumDuration(): number {
    return this.#failures >= this.#threshold ? this.#slowMs : this.#baseMs
  }

  /** A success resets the run of failures. */
  record(ok: boolean): void {
    this.#failures = ok ? 0 : this.#failures + 1
  }
}
