import type { Variant } from '../../hal/types.js'

/** `GET /api/system/version`, as the system actor publishes it. `sd_csd`/`sd_cid` are shown only with a valid token. */
export interface VersionModel {
  hwv: string
  fwv: string
  fwk: string
  fws: string
  blv: string
  blk: string
  bls: string
  uis?: string
  sd_csd?: string
  sd_cid?: string
}

/** The device facts behind `GET /api/system/status`; the gateway adds what depends on the request and the clock. */
export interface StatusModel {
  ctx: number
  fls_state: number
  temp: number
  inited: boolean
  /** P only: `<sectors>:<mode>` for Disk 0 and Disk 1. */
  storage?: [string, string]
  format?: string
  fw_upgrade?: boolean
  trusted_ts: boolean
}

/** Configuration the gateway itself needs to apply transport rules. Never secrets. */
export interface TransportConfig {
  hostname: string
  /** `*`, an exact origin, or `*.domain.tld`. */
  origin: string
  hsts: boolean
  /** Request completion timeout in 0.5 s units; 0 disables. */
  dosprot: number
}

/** The system actor's read model, published on `hem.<devid>.evt.system.state`. */
export interface SystemState {
  variant: Variant
  /** HAL monotonic milliseconds at boot; uptime is measured from here. */
  bootedAt: number
  version: VersionModel
  status: StatusModel
  transport: TransportConfig
}
