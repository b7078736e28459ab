// One time-series panel's chart as HTML and SVG: the lines in a stretched SVG (strokes kept 1.5 px wide), the axes'
// labels in HTML at percentages, so that the browser lays the panel out and no text is distorted.
import { formatValue } from './dashboard-units.js'

/** One line: its legend's name, its colour, and its points [unix seconds, value] (not finite: a gap). */
export interface ChartSeries {
  name: string
  color: string
  points: [number, number][]
}

/** The SVG's own coordinates: 0..SIZE both ways, stretched over the plot. */
const SIZE = 1000
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200]

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** 1, 2 or 5 times a power of ten, the least at least `rough`. */
function niceStep(rough: number): number {
  const power = 10 ** Math.floor(Math.log10(rough))
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough * (1 - 1e-9))!
}

/**
 * The value axis: from 0 (or below, for a negative value) to the largest value, in about four nice steps; for
 * bytes, nice in the binary multiple the labels are written in (20 MiB, not 19.1).
 */
function valueTicks(values: number[], unit: string): number[] {
  const low = Math.min(0, ...values)
  const high = Math.max(...values)
  const scale = unit === 'bytes' && high > 1024 ? 1024 ** Math.floor(Math.log(high) / Math.log(1024)) : 1
  const step = niceStep(high > low ? (high - low) / 4 / scale : 0.25) * scale
  const ticks: number[] = []
  for (let tick = Math.floor(low / step) * step; ; tick += step) {
    ticks.push(Number(tick.toPrecision(12)))
    if (tick >= high - step * 1e-9 && ticks.length > 1) return ticks
  }
}

function timeLabel(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(11, 19)
}

/** The time axis: a label every few seconds or minutes, about six across. */
function timeTicks(start: number, end: number): number[] {
  const step = TIME_STEPS.find((s) => (end - start) / s <= 6) ?? TIME_STEPS[TIME_STEPS.length - 1]!
  const ticks: number[] = []
  for (let tick = Math.ceil(start / step) * step; tick <= end; tick += step) ticks.push(tick)
  return ticks
}

/** A series' runs of finite points, each an SVG polyline's points. */
function lines(points: [number, number][], x: (t: number) => number, y: (v: number) => number): string[] {
  const runs: string[][] = [[]]
  for (const [time, value] of points)
    if (Number.isFinite(value)) runs[runs.length - 1]!.push(`${x(time).toFixed(1)},${y(value).toFixed(1)}`)
    else if (runs[runs.length - 1]!.length > 0) runs.push([])
  return runs.filter((run) => run.length > 0).map((run) => run.join(' '))
}

/** The chart of `series` over the window, its value axis written in `unit`. */
export function chartHtml(series: ChartSeries[], unit: string, window: { start: number; end: number }): string {
  const values = series.flatMap((s) => s.points.map(([, v]) => v)).filter(Number.isFinite)
  const ticks = valueTicks(values, unit)
  const [low, high] = [ticks[0]!, ticks[ticks.length - 1]!]
  const x = (time: number) => ((time - window.start) / (window.end - window.start)) * SIZE
  const y = (value: number) => SIZE - ((value - low) / (high - low)) * SIZE
  const grid = ticks.map((tick) => `<line x1="0" x2="${SIZE}" y1="${y(tick)}" y2="${y(tick)}" class="grid"/>`)
  const polylines = series.flatMap((s) =>
    lines(s.points, x, y).map((points) => `<polyline points="${points}" stroke="${s.color}"/>`),
  )
  const yLabels = ticks.map(
    (tick) => `<span style="top:${(y(tick) / SIZE) * 100}%">${escapeHtml(formatValue(tick, unit))}</span>`,
  )
  const xLabels = timeTicks(window.start, window.end).map(
    (time) => `<span style="left:${(x(time) / SIZE) * 100}%">${timeLabel(time)}</span>`,
  )
  return [
    `<div class="chart"><div class="y-axis">${yLabels.join('')}</div><div class="plot">`,
    `<svg viewBox="0 0 ${SIZE} ${SIZE}" preserveAspectRatio="none">${grid.join('')}${polylines.join('')}</svg>`,
    `<div class="x-axis">${xLabels.join('')}</div></div></div>`,
  ].join('')
}
