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

/** The shell's watch of the device (`device-watch.ts`), as a screen sees it. */
export type WatchEvent =
  /** The device answered; `back` after a silence, `newBoot` when this is another boot than the one before. */
  | { kind: 'answer'; status: DeviceStatus; readAt: number; back: boolean; newBoot: boolean }
  /** It has not answered since `since` (the browser's ms; its last answer's, or when the watch began). */
  | { kind: 'silent'; since: number }

export interface StatusWatch {
  /** Calls `listener` at each answer, and every second while the device is silent; returns what stops it. */
  listen(listener: (event: WatchEvent) => void): () => void
}

export interface AppContext {
  /** The logged-in owner's session: one token per scope, minted on first use. */
  readonly session: DeviceSession
  readonly feedback: Feedback
  /** The page came over HTTPS: key routes and crypto need it. */
  readonly secure: boolean
  /** Reads the public status now, through the shell's watch (which updates the banners). */
  status(): Promise<DeviceStatus>
  /** The shell's watch: a screen showing device values follows it rather than polling on its own. */
  readonly watch: StatusWatch
  /** Ends the session (after a passphrase change or a wipeout), back to the login form. */
  logOut(message: string): void
}

/** A screen as the navigation lists it: its code (a chunk of its own) is loaded the first time it shows. */
export interface ViewLink {
  /** Its place in the URL: `#/<path>`. */
  readonly path: string
  /** The navigation link and the screen's heading. */
  readonly title: string
  /** Its module, fetched once (the browser keeps a module it imported); rejects when it cannot be fetched. */
  load(): Promise<View>
}

/** A screen's code, as its module exports it. */
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
