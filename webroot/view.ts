// What a screen of the app is, and what the shell gives it.
import type { DeviceSession } from './device-session.js'
import type { Feedback } from './feedback.js'

/** `GET /api/system/status` as anyone may read it, plus what a token adds. */
export interface DeviceStatus {
  fls_state: number
  uptime: number
  temp?: number
  time?: number
  ts?: string
  inited?: boolean
  storage?: string[]
  format?: string
  [field: string]: unknown
}

export interface AppContext {
  /** The logged-in owner's session: one token per scope, minted on first use. */
  readonly session: DeviceSession
  readonly feedback: Feedback
  /** The page came over HTTPS: key routes and crypto need it. */
  readonly secure: boolean
  /** Reads the public status now (and updates the fail-state banner). */
  status(): Promise<DeviceStatus>
  /** Ends the session (after a passphrase change or a wipeout), back to the login form. */
  logOut(message: string): void
}

export interface View {
  /** Its place in the URL: `#/<path>`. */
  readonly path: string
  /** The navigation link and the screen's heading. */
  readonly title: string
  /**
   * Fills `root` (empty, below the heading). What it returns is called when the user leaves the
   * screen: stop timers there.
   */
  show(root: HTMLElement, ctx: AppContext): Promise<(() => void) | void>
}
