export interface LoginBrakeOptions {
  /** Every answer takes at least this long (ms); default 500. */
  baseMs?: number
  /** ...and at least this long once `threshold` failures in a row were recorded; default 1500. */
  slowMs?: number
  /** Default 3. */
  threshold?: number
}

/**
 * The brute-force brake of POST /api/auth/token, as policy only: one per client (LoginSources),
 * whose answers the login queue holds to minimumDuration() read at their arrival; the outcomes
 * of its examined attempts are recorded. What bounds guessing device-wide is the pace of checks
 * (GuessPace, on the same numbers).
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
