// The rules of the plain configuration fields, as data: the auth actor enforces them and the
// management app shows and checks them before sending. Pure, so that both can import it.

/** storage_mode values in use (device-contract §6): Disk 0 visible/writable bits, Disk 1 cipher nibble. */
export const STORAGE_MODES: readonly number[] = [0x50, 0x51, 0x53, 0xa0, 0xa1, 0xa3]
/** Disk 0 may not shrink below 32 MiB, nor leave Disk 1 less. */
export const MIN_DISK_SECTORS = 65_536

export interface ConfigFieldRule {
  /** What a valid value is, as the device's refusal words it (after the field's name). */
  what(usable: number): string
  /** `usable`: the sectors the two disks share (P). */
  valid(value: unknown, usable: number): boolean
  /** Only on devices with embedded disks (P). */
  pOnly?: true
}

export const ONLY_ON_P = 'exists only on devices with embedded disks'

/** An IPv6 host is bracketed, as a browser sends it: the client's default is the URL it talks to, whatever its host. */
const ORIGIN = /^(\*|\*\.[a-z0-9-]+(\.[a-z0-9-]+)+|https?:\/\/([a-z0-9.-]+|\[[0-9a-f:.]+\])(:\d{1,5})?)$/i
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i
const IPV4_CIDR = /^((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)(\/([12]?\d|3[0-2]))?$/
/** Text a person would type: any Unicode but control characters, and no lone surrogate. */
const PRINTABLE = /^[^\p{Cc}\p{Cs}]*$/u

const bool: ConfigFieldRule = { what: () => 'must be true or false', valid: (v) => typeof v === 'boolean' }

const text = (max: number): ConfigFieldRule => ({
  what: () => `must be printable text of at most ${max} characters`,
  // Characters as a person counts them (code points), not UTF-16 units.
  valid: (v) => typeof v === 'string' && [...v].length <= max && PRINTABLE.test(v),
})

const isInteger = (v: unknown, min: number, max: number) =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max

const integer = (min: number, max: number): ConfigFieldRule => ({
  what: () => `must be an integer from ${min} to ${max}`,
  valid: (v) => isInteger(v, min, max),
})

const pattern = (re: RegExp, what: string): ConfigFieldRule => ({
  what: () => what,
  valid: (v) => typeof v === 'string' && re.test(v),
})

/** The sectors the two disks share, from status `storage` (one "<sectors>:<mode>" per disk); 0 without disks. */
export function usableSectors(storage: unknown): number {
  return Array.isArray(storage) ? storage.reduce((sum: number, disk) => sum + parseInt(String(disk), 10), 0) : 0
}

/** The largest Disk 0 that leaves Disk 1 its minimum. */
export const maxDisk0Sectors = (usable: number) => Math.max(MIN_DISK_SECTORS, usable - MIN_DISK_SECTORS)

const rules = {
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
  storage_mode: {
    what: () => `must be one of ${STORAGE_MODES.map((m) => `0x${m.toString(16)}`).join(', ')}`,
    valid: (v) => typeof v === 'number' && STORAGE_MODES.includes(v),
    pOnly: true as const,
  },
  storage_disk0size: {
    what: (usable) => `must be an integer from ${MIN_DISK_SECTORS} to ${maxDisk0Sectors(usable)}`,
    valid: (v, usable) => isInteger(v, MIN_DISK_SECTORS, maxDisk0Sectors(usable)),
    pOnly: true as const,
  },
} satisfies Record<string, ConfigFieldRule>

export type ConfigRuleField = keyof typeof rules

/** How each plain field is checked, whether it comes from personalisation or an update. */
export const CONFIG_FIELD_RULES: Readonly<Record<ConfigRuleField, ConfigFieldRule>> = rules

/** Fields that personalisation fixes for good. */
export const FIXED_AFTER_PERSONALISATION: readonly ConfigRuleField[] = ['hostname', 'ip']
