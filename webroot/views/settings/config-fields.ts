// What the owner sees of each configuration field: its name in words, the control that edits it,
// and what it means. The rules themselves are the device's (protocol/config-field-rules.ts).
import type { ConfigRuleField } from '../../../protocol/browser.js'

export type FieldKind = 'text' | 'integer' | 'switch' | 'storage-mode'

export interface EditableField {
  name: ConfigRuleField
  label: string
  kind: FieldKind
  /** What the field does, besides its rule; for a switch, what turning it on does (its one-line hint). */
  meaning?: string
  /** Variant P only (the disks). */
  disks?: true
}

/** The fields an update may change, in the order shown (seed §2.1). */
export const EDITABLE_FIELDS: readonly EditableField[] = [
  { name: 'user', label: 'Owner name', kind: 'text', meaning: 'Shown to whoever logs in.' },
  { name: 'email', label: 'Contact e-mail', kind: 'text' },
  {
    name: 'origin',
    label: 'Allowed web origin (CORS)',
    kind: 'text',
    meaning: "Pages of this origin may call the API, besides the device's own.",
  },
  { name: 'ctx', label: 'Instance context id', kind: 'integer' },
  {
    name: 'http_option_dosprot_mode',
    label: 'Request time limit (in half seconds)',
    kind: 'integer',
    meaning: 'A request must be in within this many half seconds; 0 turns the limit off.',
  },
  {
    name: 'http_option_hsts',
    label: 'Send HSTS headers',
    kind: 'switch',
    meaning: 'On: a browser that reached the device over HTTPS uses only HTTPS for it for a year after.',
  },
  {
    name: 'dnsd',
    label: 'Built-in DNS server',
    kind: 'switch',
    meaning: 'On: the device answers DNS queries on its network port.',
  },
  {
    name: 'allow_keysearch',
    label: 'Key search without login',
    kind: 'switch',
    meaning: 'On: anyone who reaches the device may find a key by the first 6 or more bytes of its description.',
  },
  {
    name: 'trusted_ts',
    label: 'Backend is a trusted time source',
    kind: 'switch',
    meaning: 'On: the device’s clock counts as trusted; off, its status says the time is not from a trusted source.',
  },
  {
    name: 'trusted_backend',
    label: 'Backend is trusted and may control this device',
    kind: 'switch',
    meaning: 'On: the backend’s signed check-in replies may lock this device or shut it down.',
  },
  {
    name: 'storage_mode',
    label: 'Disk mode at power-up',
    kind: 'storage-mode',
    meaning: 'How Disk 0 starts, and the cipher of Disk 1 (which always starts locked).',
    disks: true,
  },
  {
    name: 'storage_disk0size',
    label: 'Disk 0 size (512-byte sectors)',
    kind: 'integer',
    meaning: 'Disk 1 gets the rest. A new size reformats both disks: everything on them is lost.',
    disks: true,
  },
]

/** What the configuration tells but no update changes, with how each value reads. */
export const FIXED_FIELDS: readonly [field: string, label: string][] = [
  ['hostname', 'Host name (fixed at personalisation)'],
  ['ip', 'IP address (fixed at personalisation)'],
  ['devid', 'Device id'],
  ['instanceid', 'Instance id'],
  ['genuine_id', 'Secure enclave serial number'],
  ['eid', 'Identity public key (eid)'],
  ['eid_sign', 'Audit log signing key (eid_sign)'],
  ['storage_capacity', 'microSD card capacity (sectors)'],
  ['iat', 'Configuration created'],
  ['uts', 'Last configuration change'],
]

/** Unix seconds, as the fixed fields' `iat` and `uts` hold them. */
export const TIME_FIELDS: ReadonlySet<string> = new Set(['iat', 'uts'])

/** A storage_mode in words, from its bits (device-contract §6). */
export function storageModeWords(mode: number): string {
  const cipher = mode >> 4 === 0xa ? 'AES-XTS' : mode >> 4 === 0x5 ? 'AES-CTR' : 'unknown cipher'
  const disk0 = (mode & 1) === 0 ? 'hidden' : (mode & 2) === 0 ? 'visible, read-only' : 'visible, read-write'
  return `0x${mode.toString(16)}: Disk 0 ${disk0}; Disk 1 ${cipher}`
}
