// The device at a glance: its state in words, the temperature over time, uptime and clock,
// version, key store and disks (lock and unlock), read again every few seconds while it shows.
import { h, type Child } from '../dom.js'
import { describeFailState } from '../fail-state.js'
import type { DeviceStatus, View } from '../view.js'
import { disksPanel } from './dashboard/disks-panel.js'
import { POLL_MS, followStatus } from './dashboard/follow-status.js'
import { TemperatureChart } from './temperature-chart.js'
import { ageWords, durationWords, unixTimeWords } from './time-words.js'

/** Status and version with what a token adds (repo_stats, sd_csd, sd_cid). */
const CONFIG_SCOPE = 'system:config'
/** Temperature readings kept for the chart: three minutes. */
const SAMPLES = 60

const VERSION_NAMES: Record<string, string> = {
  fwv: 'Firmware',
  blv: 'Bootloader',
  hwv: 'Hardware',
  uis: 'Management app (SHA-256 of its image)',
  sd_cid: 'microSD card id (CID)',
  sd_csd: 'microSD card data (CSD)',
  fwk: 'Firmware signing key',
  fws: 'Firmware signature',
  blk: 'Bootloader signing key',
  bls: 'Bootloader signature',
}

type Rows = [string, Child][]

function fill(list: HTMLDListElement, rows: Rows): void {
  list.replaceChildren(...rows.flatMap(([name, value]) => [h('dt', {}, name), h('dd', {}, value)]))
}

const number = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined)

function stateWords(fls: number): string {
  return `${describeFailState(fls)} (fls_state 0x${fls.toString(16)})`
}

/** The device's clock against this browser's: the device gives whole seconds, so 2 s either way is in step. */
function offsetWords(deviceSeconds: number, readAt: number): string {
  const offset = Math.round(deviceSeconds - readAt / 1000)
  if (Math.abs(offset) < 2) return "in step with this browser's clock (within 2 seconds)"
  const size = Math.abs(offset) < 60 ? `${Math.abs(offset)} seconds` : durationWords(offset)
  return `${size} ${offset > 0 ? 'ahead of' : 'behind'} this browser's clock`
}

/** `staleSince` (the browser's ms) when the device has been silent since: its state is then not known now. */
function statusRows(status: DeviceStatus, readAt: number, staleSince?: number): Rows {
  const time = number(status.time)
  const state = stateWords(status.fls_state)
  const rows: Rows = [
    [
      'State',
      staleSince === undefined
        ? state
        : `not known: the device does not answer (as of ${ageWords(staleSince)}: ${state})`,
    ],
    ['Temperature', status.temp === undefined ? 'not reported' : `${status.temp} °C`],
    [
      'Uptime',
      `${durationWords(status.uptime)}` + (time === undefined ? '' : ` (since ${unixTimeWords(time - status.uptime)})`),
    ],
    ['Device clock', time === undefined ? 'not set: the real-time clock has no time' : unixTimeWords(time)],
  ]
  if (time !== undefined) rows.push(['Clock offset', offsetWords(time, readAt)])
  if (status.tts === false) rows.push(['Trusted time', 'off (configuration TrustedTime)'])
  if (typeof status.format === 'string') rows.push(['Disk formatting', status.format])
  if (status.fw_upgrade === true) rows.push(['Firmware upgrade', 'this boot confirmed a new firmware'])
  if (typeof status.hostname === 'string') rows.push(['Hostname', status.hostname])
  const mirror = status.mirror as { state?: unknown; detail?: unknown } | undefined
  if (mirror) rows.push(['Fleet mirror', [mirror.state, mirror.detail].filter(Boolean).join(': ')])
  if (status.origin === '*')
    rows.push(['Allowed web origin', 'any (*): every page you visit may call the routes that need no login'])
  rows.push(['Context', String(status.ctx)])
  return rows
}

function keyStoreRows(stats: Record<string, unknown>): Rows {
  return [
    ['Slots in use', String(stats.total)],
    ['Deleted', String(stats.deleted)],
    ['Invalid (failed their check)', String(stats.invalid)],
    ['Free slots', String(stats.freeespace)],
    ['Fragmentation', `${String(stats.fragmentation)} % of the slots in use are deleted`],
  ]
}

function versionRows(version: Record<string, unknown>): Rows {
  const known = Object.keys(VERSION_NAMES).filter((name) => name in version)
  const others = Object.keys(version).filter((name) => !(name in VERSION_NAMES))
  return [...known, ...others].map((name) => [VERSION_NAMES[name] ?? name, String(version[name])])
}

export const dashboardView: View = {
  path: 'dashboard',
  title: 'Dashboard',
  async show(root, ctx) {
    const chart = new TemperatureChart(SAMPLES, POLL_MS)
    const status = h('dl', { id: 'status' })
    const keyStore = h('dl', { id: 'key-store' })
    const version = h('dl', { id: 'version' })
    const disks = disksPanel(ctx, load)
    const live = h('p', { class: 'hint', id: 'live' })
    let shown = { status: undefined as DeviceStatus | undefined, readAt: 0 }

    const showStatus = (now: DeviceStatus, readAt: number) => {
      fill(status, statusRows(now, readAt))
      status.classList.remove('stale')
      if (typeof now.temp === 'number') chart.add({ at: readAt, celsius: now.temp })
      shown = { status: now, readAt }
      const readWhen = unixTimeWords(Math.floor(readAt / 1000))
      live.textContent = `Read every ${POLL_MS / 1000} seconds; last read at ${readWhen}.`
      disks.show(Array.isArray(now.storage) ? (now.storage as string[]) : undefined)
    }
    // Everything, with what the login's token adds; the public status through the shell's watch, so that its
    // banners agree with what shows (the watch's later answers come to `followStatus`).
    async function load(): Promise<void> {
      const readAt = Date.now()
      const [full, ver] = (await Promise.all([
        ctx.session.get('/api/system/status', CONFIG_SCOPE),
        ctx.session.get('/api/system/version', CONFIG_SCOPE),
        ctx.status(),
      ])) as [DeviceStatus, Record<string, unknown>, DeviceStatus]
      showStatus(full, readAt)
      const stats = full.repo_stats as Record<string, unknown> | undefined
      if (stats) fill(keyStore, keyStoreRows(stats))
      fill(version, versionRows(ver))
    }

    await load()
    root.replaceChildren(
      h('h3', {}, 'Status'),
      status,
      chart.element,
      live,
      h('h3', {}, 'Key store'),
      keyStore,
      h('h3', {}, 'Version'),
      version,
      disks.element,
    )
    return followStatus(ctx, live, {
      shownFls: () => shown.status?.fls_state ?? 0,
      reload: load,
      show: showStatus,
      stale(since) {
        if (shown.status) fill(status, statusRows(shown.status, shown.readAt, since))
        status.classList.add('stale')
      },
    })
  },
}
