// The app's own settings, kept in this browser (localStorage): nothing secret, nothing the device knows.

/** The idle logout's periods the app offers, in minutes. */
export const IDLE_CHOICES = [5, 15, 30, 60] as const
export type IdleMinutes = (typeof IDLE_CHOICES)[number]
export const DEFAULT_IDLE_MINUTES: IdleMinutes = 15

const IDLE_KEY = 'hem.idle-minutes'

/** The idle logout's period; the default when none is stored, or what is stored is not one of the choices. */
export function idleMinutes(): IdleMinutes {
  let stored: string | null = null
  try {
    stored = localStorage.getItem(IDLE_KEY)
  } catch {
    // Storage refused (a private window's policy): the default.
  }
  return IDLE_CHOICES.find((minutes) => String(minutes) === stored) ?? DEFAULT_IDLE_MINUTES
}

/** Keeps the period for this browser; it applies from the next input on. */
export function setIdleMinutes(minutes: IdleMinutes): void {
  localStorage.setItem(IDLE_KEY, String(minutes))
}
