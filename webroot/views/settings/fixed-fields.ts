// The configuration fields no update changes: the device's identity, keys and times.
import { h } from '../../dom.js'
import type { Config } from './config-form.js'
import { FIXED_FIELDS, TIME_FIELDS } from './config-fields.js'

const words = (field: string, value: unknown) =>
  TIME_FIELDS.has(field) && typeof value === 'number' ? new Date(value * 1000).toISOString() : String(value)

/** Fills `list` with the fields `config` has. */
export function fillFixedFields(list: HTMLDListElement, config: Config): void {
  list.replaceChildren(
    ...FIXED_FIELDS.filter(([field]) => config[field] !== undefined).flatMap(([field, label]) => [
      h('dt', {}, label),
      h('dd', {}, words(field, config[field])),
    ]),
  )
}
