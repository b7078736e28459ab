// A Grafana dashboard's JSON drawn as one HTML page in a dark Grafana-like style, from the answers a Prometheus gave
// to its panels' queries: each panel at its gridPos (24 columns, rows of 30 px), a time series as a line chart with
// its legend, a stat as a big number, an empty answer as "No data". For the docs' screenshot; Grafana is not used.
import { chartHtml, type ChartSeries, escapeHtml } from './dashboard-chart.js'
import { formatValue } from './dashboard-units.js'
import type { RangeSeries } from './prometheus.js'

export interface DashboardTarget {
  refId: string
  expr: string
  legendFormat?: string
}

export interface GridPos {
  x: number
  y: number
  w: number
  h: number
}

export interface DashboardPanel {
  id: number
  type: string
  title: string
  gridPos: GridPos
  fieldConfig?: { defaults?: { unit?: string } }
  targets?: DashboardTarget[]
}

export interface Dashboard {
  title: string
  panels: DashboardPanel[]
}

/** Grafana's grid: 24 columns, a row 30 px high, 8 px between panels. */
const COLUMNS = 24
const ROW = 30
const GAP = 8
/** Grafana's classic palette, in its order. */
const PALETTE = ['#73bf69', '#f2cc0c', '#8ab8ff', '#ff780a', '#f2495c', '#5794f2', '#b877d9', '#705da0', '#37872d']

/** Where a panel goes on a grid `width` px wide, in px from the grid's top left. */
export function gridBox({ x, y, w, h }: GridPos, width: number) {
  const column = (width + GAP) / COLUMNS
  return { left: x * column, top: y * (ROW + GAP), width: w * column - GAP, height: h * (ROW + GAP) - GAP }
}

/** A series' legend: the target's legendFormat with its {{label}}s filled in, else the series' labels. */
function legendName(target: DashboardTarget, metric: Record<string, string>): string {
  if (target.legendFormat && target.legendFormat !== '__auto')
    return target.legendFormat.replace(
      /\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g,
      (_, name: string) => metric[name] ?? '',
    )
  const labels = Object.entries(metric).map(([name, value]) => `${name}="${value}"`)
  return labels.length > 0 ? `{${labels.join(', ')}}` : target.expr
}

/** The panel's series, named and coloured, from the answers to its targets. */
function panelSeries(panel: DashboardPanel, answers: ReadonlyMap<DashboardTarget, RangeSeries[]>): ChartSeries[] {
  const series = (panel.targets ?? []).flatMap((target) =>
    (answers.get(target) ?? []).map((s) => ({
      name: legendName(target, s.metric),
      points: s.values.map(([time, value]): [number, number] => [time, Number(value)]),
    })),
  )
  return series.map((s, index) => ({ ...s, color: PALETTE[index % PALETTE.length]! }))
}

function legendHtml(series: ChartSeries[]): string {
  const items = series.map((s) => `<li><i style="background:${s.color}"></i>${escapeHtml(s.name)}</li>`)
  return `<ul class="legend">${items.join('')}</ul>`
}

/** The stat panel's number: its first series' last finite value. */
function statHtml(series: ChartSeries[], unit: string): string {
  const last = series[0]!.points.filter(([, value]) => Number.isFinite(value)).at(-1)![1]
  return `<div class="stat" style="color:${series[0]!.color}">${escapeHtml(formatValue(last, unit))}</div>`
}

function panelHtml(
  panel: DashboardPanel,
  series: ChartSeries[],
  window: { start: number; end: number },
  gridWidth: number,
): string {
  const box = gridBox(panel.gridPos, gridWidth)
  const style = `left:${box.left}px;top:${box.top}px;width:${box.width}px;height:${box.height}px`
  const unit = panel.fieldConfig?.defaults?.unit ?? 'short'
  const hasData = series.some((s) => s.points.some(([, value]) => Number.isFinite(value)))
  const body = !hasData
    ? '<div class="no-data">No data</div>'
    : panel.type === 'stat'
      ? statHtml(series, unit)
      : chartHtml(series, unit, window) + legendHtml(series)
  const { x, y, w, h } = panel.gridPos
  return [
    `<section class="panel" data-panel="${panel.id}" data-grid="${x},${y},${w},${h}" style="${style}">`,
    `<h2>${escapeHtml(panel.title)}</h2>${body}</section>`,
  ].join('')
}

export interface PageOptions {
  /** The time range queried, unix seconds. */
  window: { start: number; end: number }
  /** The page's width in px (the grid's is 32 px less). */
  width: number
  /** The footer: how the page was made. */
  caption: string
}

/** Whether a panel had no series with a point: the panels the page shows "No data" for. */
export function panelsWithoutData(dashboard: Dashboard, answers: ReadonlyMap<DashboardTarget, RangeSeries[]>) {
  return dashboard.panels.filter(
    (panel) => !panelSeries(panel, answers).some((s) => s.points.some(([, value]) => Number.isFinite(value))),
  )
}

/** The whole page: the dashboard's title and time range, its panels, the caption. */
export function dashboardPage(
  dashboard: Dashboard,
  answers: ReadonlyMap<DashboardTarget, RangeSeries[]>,
  { window, width, caption }: PageOptions,
): string {
  const gridWidth = width - 32
  const rows = Math.max(0, ...dashboard.panels.map((p) => p.gridPos.y + p.gridPos.h))
  const panels = dashboard.panels.map((panel) => panelHtml(panel, panelSeries(panel, answers), window, gridWidth))
  const height = gridBox({ x: 0, y: 0, w: 1, h: rows }, gridWidth).height
  const range = [window.start, window.end].map((s) => new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' '))
  return [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(dashboard.title)}</title>`,
    `<style>${STYLE}</style></head><body style="width:${width}px">`,
    `<header><h1>${escapeHtml(dashboard.title)}</h1><span>${range[0]} to ${range[1]} UTC</span></header>`,
    `<main id="grid" style="width:${gridWidth}px;height:${height}px">`,
    `${panels.join('')}</main><footer>${escapeHtml(caption)}</footer></body></html>`,
  ].join('')
}

const STYLE = `
* { box-sizing: border-box; }
body { margin: 0; padding: 0 16px 16px; background: #111217; color: #ccccdc; font: 12px/1.4 'DejaVu Sans', sans-serif; }
header { display: flex; align-items: baseline; gap: 16px; padding: 14px 0; }
h1 { margin: 0; font-size: 18px; font-weight: 500; }
header span, footer { color: rgba(204, 204, 220, 0.65); }
#grid { position: relative; }
.panel { position: absolute; display: flex; flex-direction: column; padding: 6px 8px 6px 4px; background: #181b1f;
  border: 1px solid rgba(204, 204, 220, 0.12); border-radius: 2px; }
h2 { margin: 0 0 6px 4px; font-size: 13px; font-weight: 500; white-space: nowrap; overflow: hidden; }
.chart { flex: 1; min-height: 0; display: flex; padding: 6px 0 18px; }
.y-axis { position: relative; width: 68px; flex: none; }
.y-axis span { position: absolute; right: 8px; transform: translateY(-50%); white-space: nowrap;
  color: rgba(204, 204, 220, 0.65); font-size: 11px; }
.plot { position: relative; flex: 1; }
.plot svg { position: absolute; inset: 0; width: 100%; height: 100%; overflow: visible; }
.plot line.grid { stroke: rgba(204, 204, 220, 0.1); stroke-width: 1; vector-effect: non-scaling-stroke; }
.plot polyline { fill: none; stroke-width: 1.5; vector-effect: non-scaling-stroke; stroke-linejoin: round; }
.x-axis span { position: absolute; top: calc(100% + 3px); transform: translateX(-50%); color: rgba(204, 204, 220, 0.65);
  font-size: 11px; }
.legend { display: flex; flex-wrap: wrap; gap: 2px 14px; margin: 2px 0 0 72px; padding: 0; list-style: none;
  max-height: 52px; overflow: hidden; }
.legend i { display: inline-block; width: 14px; height: 4px; margin: 0 6px 2px 0; border-radius: 1px;
  vertical-align: middle; }
.no-data, .stat { flex: 1; display: flex; align-items: center; justify-content: center; }
.no-data { color: rgba(204, 204, 220, 0.65); font-size: 14px; }
.stat { font-size: 40px; font-weight: 500; }
footer { margin-top: 12px; }
`
