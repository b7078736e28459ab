// What a personalisation sets unless its owner says otherwise: hemctl init's defaults and the set-up wizard's,
// one list so that both make the same device.

/** The device's host name (fixed by personalisation). */
export const DEFAULT_HOSTNAME = 'hem.local'

/** Fields no owner is asked about at set-up: changeable later in the configuration. */
export const INIT_FIXED_CHOICES = { trusted_ts: true, trusted_backend: false, allow_keysearch: false } as const

/**
 * P's network and disks: its address (fixed by personalisation), the disks' mode, Disk 0's size in sectors, and
 * the built-in DNS server off.
 */
export const P_INIT_DEFAULTS = {
  ip: '192.168.7.1/24',
  storage_mode: 0x51,
  storage_disk0size: 4_194_304,
  dnsd: false,
} as const
