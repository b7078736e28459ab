import type { Variant } from '../protocol/index.js'

/**
 * The device configuration aggregate: a plain reducer over the events the journal records
 * (personalisation, updates, wipeout), so that replaying the journal rebuilds it. Holds no
 * secret: login keys and TLS material live in the enclave.
 */
export interface DeviceConfig {
  user: string
  email: string
  hostname: string
  /** IP address, possibly with a prefix length (P). */
  ip: string
  /** The CORS origin admitted besides the device's own: `*`, an origin, `*.domain.tld`; '' (factory) none. */
  origin: string
  ctx: number
  dnsd: boolean
  trusted_ts: boolean
  trusted_backend: boolean
  allow_keysearch: boolean
  http_option_hsts: boolean
  http_option_dosprot_mode: number
  /** P only: bit0 Disk 0 visible at power-up, bit1 writable, high nibble Disk 1 cipher. */
  storage_mode?: number
  /** P only: Disk 0 size in sectors. */
  storage_disk0size?: number
  /** Set at personalisation. */
  instanceid: string
  /** Unix seconds: when the configuration was created (personalisation). */
  iat: number
  /** Unix seconds of the last change; strictly increasing. */
  uts: number
}

/** Fields an update may set directly (the others need their own rules: keys, TLS, wipeout). */
export const plainConfigFields = [
  'user',
  'email',
  'origin',
  'ctx',
  'dnsd',
  'trusted_ts',
  'trusted_backend',
  'allow_keysearch',
  'http_option_hsts',
  'http_option_dosprot_mode',
  'storage_mode',
  'storage_disk0size',
  'hostname',
  'ip',
] as const satisfies readonly (keyof DeviceConfig)[]
export type PlainConfigField = (typeof plainConfigFields)[number]
export type ConfigChanges = Partial<Pick<DeviceConfig, PlainConfigField>>

export type ConfigEvent =
  | { kind: 'personalised'; cfg: ConfigChanges; instanceid: string; at: number }
  | { kind: 'updated'; changed: ConfigChanges; uts: number }
  | { kind: 'wiped' }

export const DEFAULT_DISK0_SECTORS = 4_194_304

/** Factory defaults: what a fresh or wiped device starts from. */
export function factoryConfig(variant: Variant): DeviceConfig {
  return {
    user: '',
    email: '',
    hostname: 'hem.local',
    ip: '',
    // No page but the device's own (which the gateway always admits): a fresh device that admitted every origin
    // could be personalised by any page its owner visits.
    origin: '',
    ctx: 0,
    dnsd: false,
    trusted_ts: true,
    trusted_backend: false,
    allow_keysearch: false,
    http_option_hsts: false,
    http_option_dosprot_mode: 0,
    ...(variant === 'P' ? { storage_mode: 0x51, storage_disk0size: DEFAULT_DISK0_SECTORS } : {}),
    instanceid: '',
    iat: 0,
    uts: 0,
  }
}

export function reduceConfig(state: DeviceConfig, event: ConfigEvent, variant: Variant): DeviceConfig {
  switch (event.kind) {
    case 'personalised':
      return { ...factoryConfig(variant), ...event.cfg, instanceid: event.instanceid, iat: event.at, uts: event.at }
    case 'updated':
      return { ...state, ...event.changed, uts: event.uts }
    case 'wiped':
      return factoryConfig(variant)
  }
}

/** `uts` must increase with every successful change, even two in the same second. */
export function nextUts(previous: number, at: number): number {
  return Math.max(at, previous + 1)
}
