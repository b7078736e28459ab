import type { CloudRoute, CloudState } from './types.js'

/** What the broker's route factory is given (ext-auth contract §3.4, §3.5). */
export interface BrokerMount {
  state: CloudState
  masterSecret: Uint8Array
  /** The base of the links the broker hands out. */
  publicUrl: string
  /** Only then does `GET /notify/register/pending` answer. */
  testMode: boolean
}

/** The broker's `/notify/*` routes: the one place that mounts them (none until the broker lands). */
export function brokerRoutes(_mount: BrokerMount): CloudRoute[] {
  return []
}
