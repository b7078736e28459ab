import type { Variant } from './device.js'
import type { MirrorStatus } from './mirror-status.js'

/** `GET /api/system/version`, as the system actor publishes it. `sd_csd`/`sd_cid` are shown only with a valid token. */
export interface VersionModel {
  hwv: string
  fwv: string
  fwk: string
  fws: string
  blv: string
  blk: string
  bls: string
  sd_csd?: string
  sd_cid?: string
}

/** The hardware facts behind `GET /api/system/status`; identity facts come from the auth actor. */
export interface HealthModel {
  fls_state: number
  temp: number
  /** The journal mirror's state, as the eventstore publishes it; only on a device given a fleet backend. */
  mirror?: MirrorStatus
}

/** The chip temperatures, in whole degrees Celsius, outside which the device raises fls bit 0x04. */
export interface TemperatureRange {
  min: number
  max: number
}

/** The system actor's read model, published on `hem.<devid>.evt.system.state`. */
export interface SystemState {
  variant: Variant
  /** HAL monotonic milliseconds at boot; uptime is measured from here. */
  bootedAt: number
  version: VersionModel
  status: HealthModel
}
