import { randomBytes } from 'node:crypto'
import type { CloudRoute, CloudState } from '../types.js'
import { challengeRoutes } from './challenge-routes.js'
import { EidRateLimit, EVENT_RATE, REGISTER_RATE, type RateRule } from './eid-rate-limit.js'
import { eventDataRoutes } from './event-data-routes.js'
import { eventRoutes } from './event-routes.js'
import { NonceBook } from './nonce-book.js'
import type { NotifyContext } from './notify-context.js'
import { notifyStore } from './notify-store.js'
import { registerRoutes } from './register-routes.js'
import { SessionKeys } from './session-keys.js'
import { sessionRoutes } from './session-routes.js'
import { subscriberRoutes } from './subscriber-routes.js'
import { SubscriberBook } from './subscriber-book.js'

export interface NotifyOptions {
  /** Where the broker keeps its state: JetStream KV, shared by every instance of the cloud. */
  state: CloudState
  /** The secret every session key is derived from (≥ 32 bytes); the same on every instance. */
  masterSecret: Uint8Array
  /** The cloud's public base URL (`https://api.encedo.com`): registration links and the event URL. */
  publicUrl: string
  /** Only then `GET /notify/register/pending` answers (the harness's automatic authenticator). */
  testMode: boolean
  /** Random bytes for ids and pids (default: node's CSPRNG). */
  random?: (n: number) => Uint8Array
  /** Operator notices (default: none). They name public values only. */
  warn?: (message: string) => void
  /** The per-eid limits of `register/init` and `event/new` (default: REGISTER_RATE, EVENT_RATE). */
  rates?: { register?: RateRule; event?: RateRule }
}

/** The notification broker's routes, `/notify/*` (contract §3.4, §3.5), for the cloud's front to mount. */
export function notifyRoutes(options: NotifyOptions): CloudRoute[] {
  const store = notifyStore(options.state)
  const ctx: NotifyContext = {
    store,
    keys: new SessionKeys(options.masterSecret),
    subscribers: new SubscriberBook(store),
    deviceNonces: new NonceBook(store.nonces),
    appNonces: new NonceBook(store.appNonces),
    registerRate: new EidRateLimit(store.rates, 'register', options.rates?.register ?? REGISTER_RATE),
    eventRate: new EidRateLimit(store.rates, 'event', options.rates?.event ?? EVENT_RATE),
    publicUrl: options.publicUrl.replace(/\/+$/, ''),
    testMode: options.testMode,
    random: options.random ?? ((n) => new Uint8Array(randomBytes(n))),
    warn: options.warn ?? (() => undefined),
  }
  return [
    ...sessionRoutes(ctx),
    ...registerRoutes(ctx),
    ...challengeRoutes(ctx),
    ...eventRoutes(ctx),
    ...eventDataRoutes(ctx),
    ...subscriberRoutes(ctx),
  ]
}
