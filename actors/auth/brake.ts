export interface LoginBrakeOptions {
  /** Every answer takes at least this long (ms); default 500. */
  baseMs?: number
  /** ...and at least this long once `threshold` refusals in a row were recorded; default 1500. */
  slowMs?: number
  /** Default 3. */
  threshold?: number
}

/** The brake's numbers, defaults filled in: they set both each client's floor and the device's pace of checks. */
export type BrakeRules = Required<LoginBrakeOptions>

/** How long a client's refusals are remembered after its last one (ms of the brake's clock). */
export const MEMORY_MS = 15 * 60_000

export function brakeRules(options: LoginBrakeOptions = {}): BrakeRules {
  return { baseMs: options.baseMs ?? 500, slowMs: options.slowMs ?? 1500, threshold: options.threshold ?? 3 }
}

/**
 * What the brake knows of one client: its refusals since it was last let in or forgotten, and
 * when the last one was. No standing (undefined) is a client with no refusal to remember.
 */
export interface Standing {
  readonly refusals: number
  readonly at: number
}

/**
 * The brute-force brake of POST /api/auth/token, as decisions alone (LoginSources keeps the
 * standings, the login queue holds the answers): a client's standing as it stands at `now`,
 * forgotten after 15 quiet minutes.
 */
export function recalled(standing: Standing | undefined, now: number): Standing | undefined {
  return standing && now - standing.at <= MEMORY_MS ? standing : undefined
}

/**
 * A refusal of the client at `now`, examined (400, 401, 409) or unread (429, 504): its answers slow
 * down whatever the reason, a flood of them too. A success is no standing: the client is forgotten.
 */
export function refusedAt(standing: Standing | undefined, now: number): Standing {
  return { refusals: (recalled(standing, now)?.refusals ?? 0) + 1, at: now }
}

/**
 * Milliseconds an answer to a client of `standing` must take at least: `baseMs`, `slowMs` after
 * `threshold` refusals in a row. It reads the client's own outcomes only, so an answer's time
 * tells nothing of another's.
 */
export function floorOf(rules: BrakeRules, standing: Standing | undefined): number {
  return (standing?.refusals ?? 0) >= rules.threshold ? rules.slowMs : rules.baseMs
}
