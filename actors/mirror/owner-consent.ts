// Whether the owner lets the journal leave the device: the configuration field `trusted_backend`,
// as the journal tells it (personalisation, updates, wipeout), folded by the identity's own reducer.

import { configEvent, type DeviceConfig, factoryConfig, reduceConfig } from '../../machines/index.js'
import { decodeRecordData } from '../../eventstore/index.js'
import { LogType, type RecordLine, type Variant } from '../../protocol/index.js'

const CONFIG_TYPES: ReadonlySet<number> = new Set([LogType.TRANSITION, LogType.DEVICE_INITED, LogType.CONFIG_UPDATED])

export class OwnerConsent {
  private config: DeviceConfig

  constructor(private readonly variant: Variant) {
    this.config = factoryConfig(variant)
  }

  get trustedBackend(): boolean {
    return this.config.trusted_backend
  }

  /** Folds one record in order; records that change no configuration (or do not decode) change nothing. */
  fold(record: RecordLine): void {
    if (!CONFIG_TYPES.has(record.type)) return
    let decoded: Record<string, unknown> | undefined
    try {
      decoded = decodeRecordData(record)
    } catch {
      return
    }
    const event = configEvent({ type: record.type, result: record.result, decoded })
    if (event) this.config = reduceConfig(this.config, event, this.variant)
  }
}
