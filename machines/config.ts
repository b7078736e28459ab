import type { Variant } from '../hal/types.js'

/** The device configuration aggregate (a plain reducer; personalisation and POST config extend it). */
export interface DeviceConfig {
  hostname: string
  origin: string
  ctx: number
  trusted_ts: boolean
  trusted_backend: boolean
  allow_keysearch: boolean
  http_option_hsts: boolean
  http_option_dosprot_mode: number
  /** P only: bit0 Disk 0 visible at power-up, bit1 writable, high nibble Disk 1 cipher. */
  storage_mode?: number
}

/** Factory defaults: what a fresh or wiped device starts from. */
export function factoryConfig(variant: Variant): DeviceConfig {
  return {
    hostname: 'hem.local',
    origin: '*',
    ctx: 0,
    trusted_ts: true,
    trusted_backend: false,
    allow_keysearch: false,
    http_option_hsts: false,
    http_option_dosprot_mode: 0,
    ...(variant === 'P' ? { storage_mode: 0x51 } : {}),
  }
}
