/**
 * How long a caller waits for a command's reply, by the kind of operation it is. Margins are
 * generous on purpose: on a loaded two-core device a slow answer must not pass for a missing
 * service, and a command whose deadline passes is never started (bus/service-host.ts).
 * - `short`: reads and small writes (status, config, key management, ciphers, challenges).
 * - `medium`: work with a deliberate or heavy part: login (the brute-force brake answers no
 *   sooner than 0.5–1.5 s, attempts queue one at a time), personalisation, self-test, reboot,
 *   shutdown, disk unlock and lock, check-in.
 * - `long`: bulk work on storage: image upload chunks, check and install of an image (writing
 *   a slot), configuration changes (disk format, wipeout), log download.
 */
export type DeadlineClass = 'short' | 'medium' | 'long'

export const DEADLINE_MS: Readonly<Record<DeadlineClass, number>> = {
  short: 10_000,
  medium: 30_000,
  long: 60_000,
}

/**
 * True once a command's deadline (bus-messages.ts `CommandRequest.deadline`) has passed: nobody
 * waits for its answer any more. A command without one is always awaited; one whose deadline
 * is not a finite number (NaN, a numeric string or a BigInt after decoding) counts as passed:
 * fail closed.
 */
export function deadlinePassed(deadline: unknown, now: number): boolean {
  if (deadline === undefined) return false
  return typeof deadline !== 'number' || !Number.isFinite(deadline) || now >= deadline
}

/** The 504 answer when a command's reply did not come before its deadline. */
export const TIMEOUT_ERROR = {
  error: 'timeout',
  message: 'The operation did not finish in time; it may still complete',
} as const
