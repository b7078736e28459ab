import type { StorageGeometry } from '../../hal/index.js'
import type { Variant } from '../../protocol/index.js'
import { type ConfigChanges, type DeviceConfig, type PlainConfigField } from '../../machines/index.js'

/** A request the configuration refuses; `status` is the HTTP answer (400 malformed, 406 refused). */
export class ConfigRuleError extends Error {
  override readonly name = 'ConfigRuleError'
  constructor(
    readonly status: 400 | 406,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

const bad = (field: string, what: string) => new ConfigRuleError(400, 'bad_request', `\`${field}\` ${what}`)

/** storage_mode values in use (device-contract §6): Disk 0 visible/writable bits, Disk 1 cipher nibble. */
export const STORAGE_MODES: ReadonlySet<number> = new Set([0x50, 0x51, 0x53, 0xa0, 0xa1, 0xa3])
/** Disk 0 may not shrink below 32 MiB, nor leave Disk 1 less. */
export const MIN_DISK_SECTORS = 65_536

/**
 * Sectors the two disks share: the card less what the system keeps for itself. The bound of
 * `storage_disk0size` is taken from this, not from the raw capacity, or a size the rules accept
 * would leave Disk 1 too small and the format would fail.
 */
export function usableSectors(storage: Pick<StorageGeometry, 'disk0Sectors' | 'disk1Sectors'>): number {
  return storage.disk0Sectors + storage.disk1Sectors
}

const ORIGIN = /^(\*|\*\.[a-z0-9-]+(\.[a-z0-9-]+)+|https?:\/\/[a-z0-9.-]+(:\d{1,5})?)$/i
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i
const IPV4_CIDR = /^((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)(\/([12]?\d|3[0-2]))?$/
/** Text a person would type: any Unicode but control characters, and no lone surrogate. */
const PRINTABLE = /^[^\p{Cc}\p{Cs}]*$/u

/** `usable`: usableSectors of the card (P). */
type Check = (value: unknown, field: string, variant: Variant, usable: number) => unknown

const bool: Check = (v, f) => {
  if (typeof v !== 'boolean') throw bad(f, 'must be true or false')
  return v
}
const text =
  (max: number): Check =>
  (v, f) => {
    // Characters as a person counts them (code points), not UTF-16 units.
    if (typeof v !== 'string' || [...v].length > max || !PRINTABLE.test(v))
      throw bad(f, `must be printable text of at most ${max} characters`)
    return v
  }
const integer =
  (min: number, max: number): Check =>
  (v, f) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      throw bad(f, `must be an integer from ${min} to ${max}`)
    return v
  }
const pattern =
  (re: RegExp, what: string): Check =>
  (v, f) => {
    if (typeof v !== 'string' || !re.test(v)) throw bad(f, what)
    return v
  }
const pOnly =
  (check: Check): Check =>
  (v, f, variant, usable) => {
    if (variant !== 'P') throw bad(f, 'exists only on devices with embedded disks')
    return check(v, f, variant, usable)
  }

/** How each plain field is checked, whether it comes from personalisation or an update. */
export const fieldRules: Readonly<Record<PlainConfigField, Check>> = {
  user: text(64),
  email: text(64),
  hostname: pattern(HOSTNAME, 'must be a host name'),
  ip: pattern(IPV4_CIDR, 'must be an IPv4 address, optionally with a prefix length'),
  origin: pattern(ORIGIN, 'must be *, an http(s) origin, or *.domain.tld'),
  ctx: integer(0, 0xffff_ffff),
  dnsd: bool,
  trusted_ts: bool,
  trusted_backend: bool,
  allow_keysearch: bool,
  http_option_hsts: bool,
  http_option_dosprot_mode: integer(0, 255),
  storage_mode: pOnly((v, f) => {
    if (typeof v !== 'number' || !STORAGE_MODES.has(v))
      throw bad(f, `must be one of ${[...STORAGE_MODES].map((m) => `0x${m.toString(16)}`).join(', ')}`)
    return v
  }),
  storage_disk0size: pOnly((v, f, _variant, usable) =>
    integer(MIN_DISK_SECTORS, Math.max(MIN_DISK_SECTORS, usable - MIN_DISK_SECTORS))(v, f, _variant, usable),
  ),
}

/** Fields that personalisation fixes for good. */
const FIXED_AFTER_PERSONALISATION: readonly PlainConfigField[] = ['hostname', 'ip']

/** Personalisation `cfg`: required on every device, and on P the network and disk fields too. */
const REQUIRED_AT_INIT: readonly PlainConfigField[] = [
  'user',
  'hostname',
  'origin',
  'trusted_ts',
  'trusted_backend',
  'allow_keysearch',
  'email',
]
const REQUIRED_AT_INIT_P: readonly PlainConfigField[] = ['ip', 'storage_mode', 'storage_disk0size', 'dnsd']

/** Checks the public fields of a personalisation `cfg`; keys and `gen_csr` are the caller's. */
export function personalisationFields(cfg: Record<string, unknown>, variant: Variant, usable: number): ConfigChanges {
  const required = variant === 'P' ? [...REQUIRED_AT_INIT, ...REQUIRED_AT_INIT_P] : REQUIRED_AT_INIT
  for (const field of required) if (!Object.hasOwn(cfg, field)) throw bad(`cfg.${field}`, 'is required')
  const changes: Record<string, unknown> = {}
  for (const field of Object.keys(fieldRules) as PlainConfigField[]) {
    if (Object.hasOwn(cfg, field)) changes[field] = fieldRules[field](cfg[field], `cfg.${field}`, variant, usable)
  }
  return changes as ConfigChanges
}

/**
 * The plain fields of an update that really change something. Unknown keys are ignored;
 * hostname and ip cannot change after personalisation.
 */
export function updatedFields(
  body: Record<string, unknown>,
  current: DeviceConfig,
  variant: Variant,
  usable: number,
): ConfigChanges {
  const changes: Record<string, unknown> = {}
  for (const field of Object.keys(fieldRules) as PlainConfigField[]) {
    if (!Object.hasOwn(body, field)) continue
    const value = fieldRules[field](body[field], field, variant, usable)
    if (value === current[field]) continue
    if (FIXED_AFTER_PERSONALISATION.includes(field)) throw bad(field, 'cannot change after personalisation')
    changes[field] = value
  }
  return changes as ConfigChanges
}
