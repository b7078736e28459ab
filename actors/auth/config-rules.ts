import type { StorageGeometry } from '../../hal/index.js'
import {
  CONFIG_FIELD_RULES,
  type ConfigFieldRule,
  FIXED_AFTER_PERSONALISATION,
  ONLY_ON_P,
  type Variant,
} from '../../protocol/index.js'
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

/**
 * Sectors the two disks share: the card less what the system keeps for itself. The bound of
 * `storage_disk0size` is taken from this, not from the raw capacity, or a size the rules accept
 * would leave Disk 1 too small and the format would fail.
 */
export function usableSectors(storage: Pick<StorageGeometry, 'disk0Sectors' | 'disk1Sectors'>): number {
  return storage.disk0Sectors + storage.disk1Sectors
}

/** `usable`: usableSectors of the card (P). */
type Check = (value: unknown, field: string, variant: Variant, usable: number) => unknown

const check =
  (rule: ConfigFieldRule): Check =>
  (v, f, variant, usable) => {
    if (rule.pOnly && variant !== 'P') throw bad(f, ONLY_ON_P)
    if (!rule.valid(v, usable)) throw bad(f, rule.what(usable))
    return v
  }

/** The rules by field: every plain field has one (protocol/config-field-rules.ts, shared with the app). */
const rules: Readonly<Record<PlainConfigField, ConfigFieldRule>> = CONFIG_FIELD_RULES

/** How each plain field is checked, whether it comes from personalisation or an update. */
export const fieldRules = Object.fromEntries(
  Object.entries(rules).map(([field, rule]) => [field, check(rule)]),
) as Readonly<Record<PlainConfigField, Check>>

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
