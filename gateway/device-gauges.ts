import { Gauge, type Registry } from 'prom-client'
import { FLS, MIRROR_STATES } from '../protocol/index.js'
import type { GatewayBus } from '../bus/index.js'
import type { Clock } from '../hal/index.js'
import { deviceFailState, deviceView, type DeviceView } from './device-view.js'

const FLS_BITS = Object.entries(FLS)
/** No mirror: a device given no fleet backend. */
const NO_MIRROR = 'none'

/**
 * The device's state as gauges, read from the read models the gateway follows at each scrape (what status shows):
 * nothing is kept, so a scrape always sees the device as it is. No gauge is set while the read models are unknown.
 */
export function registerDeviceGauges(registry: Registry, bus: GatewayBus, clock: Clock): void {
  const registers = [registry]
  const gauge = (name: string, help: string, read: (device: DeviceView) => number | undefined) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const device = deviceView(bus)
        const value = device && read(device)
        if (value !== undefined) this.set(value)
      },
    })
  gauge('hem_fls_state', 'fls_state as status shows it (0: no fault)', deviceFailState)
  gauge('hem_temperature_celsius', 'Chip temperature', (d) => d.system.status.temp)
  gauge('hem_entropy_healthy', '1 while the entropy source passes its health tests (fls bit ENTROPY clear)', (d) =>
    deviceFailState(d) & FLS.ENTROPY ? 0 : 1,
  )
  gauge(
    'hem_key_slots_used',
    'Key slots in use: live keys, deleted and invalid slots',
    (d) => d.keystore.repo_stats.total,
  )
  gauge('hem_key_slots_free', 'Key slots free', (d) => d.keystore.repo_stats.freeespace)
  gauge('hem_key_slots_deleted', 'Key slots of deleted keys', (d) => d.keystore.repo_stats.deleted)
  gauge('hem_key_slots_invalid', 'Key slots whose seal or contents did not check', (d) => d.keystore.repo_stats.invalid)
  labelledGauge(registry, bus, 'hem_fls_state_bit', 'Each fail-state bit of fls_state (1: raised)', 'bit', (d) => {
    const fls = deviceFailState(d)
    return FLS_BITS.map(([bit, mask]) => [bit, fls & mask ? 1 : 0])
  })
  labelledGauge(registry, bus, 'hem_mirror_state', 'The journal mirror state (1: the current one)', 'state', (d) => {
    const current = d.system.status.mirror?.state ?? NO_MIRROR
    return [NO_MIRROR, ...MIRROR_STATES].map((state) => [state, state === current ? 1 : 0])
  })
  // 0 while the lag is not known (no mirror, `off`, the stream not read yet): a stale value would outlive its cause.
  gauge(
    'hem_mirror_lag_records',
    'Durable journal records the mirror stream does not hold yet (0 while not known)',
    (d) => d.system.status.mirror?.lag?.records ?? 0,
  )
  gauge('hem_mirror_lag_seconds', 'Age of the oldest journal record the mirror stream does not hold yet', (d) => {
    const oldest = d.system.status.mirror?.lag?.oldest
    // The journal's times are the device clock's: an unset clock has no age to give.
    return oldest === undefined || !clock.isSet() ? 0 : Math.max(0, clock.now() / 1000 - oldest)
  })
}

/** A gauge of a bounded set of label values, each set at every scrape. */
function labelledGauge(
  registry: Registry,
  bus: GatewayBus,
  name: string,
  help: string,
  label: string,
  read: (device: DeviceView) => [string, number][],
): void {
  new Gauge({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect() {
      const device = deviceView(bus)
      if (device) for (const [value, set] of read(device)) this.labels(value).set(set)
    },
  })
}
