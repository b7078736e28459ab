// The dashboard's screenshot page (test/helpers/dashboard-page.ts) in Chromium, from a dashboard JSON and canned
// query_range answers: one panel per dashboard panel at its grid position, lines and legends from the answers
// alone, a stat's last value, and "No data" for an empty answer.
import t from 'tap'
import { noChromium, openPage } from './helpers/browser.js'
import { type Dashboard, type DashboardTarget, dashboardPage, panelsWithoutData } from './helpers/dashboard-page.js'
import type { RangeSeries } from './helpers/prometheus.js'

const START = 1_800_000_000
const series = (metric: Record<string, string>, values: number[]): RangeSeries => ({
  metric,
  values: values.map((value, i) => [START + 10 * i, String(value)]),
})

const dashboard: Dashboard = {
  title: 'a test dashboard',
  panels: [
    {
      id: 1,
      type: 'timeseries',
      title: 'Requests',
      gridPos: { x: 0, y: 0, w: 12, h: 8 },
      fieldConfig: { defaults: { unit: 'reqps' } },
      targets: [{ refId: 'A', expr: 'sum by (route) (rate(r[5m]))', legendFormat: '{{route}}' }],
    },
    {
      id: 2,
      type: 'timeseries',
      title: 'Nothing yet',
      gridPos: { x: 12, y: 0, w: 12, h: 8 },
      targets: [{ refId: 'A', expr: 'absent_here' }],
    },
    {
      id: 3,
      type: 'stat',
      title: 'Memory',
      gridPos: { x: 0, y: 8, w: 24, h: 4 },
      fieldConfig: { defaults: { unit: 'bytes' } },
      targets: [{ refId: 'A', expr: 'rss' }],
    },
  ],
}
const [requests, empty, memory] = dashboard.panels.map((panel) => panel.targets![0]!) as DashboardTarget[]
const answers = new Map<DashboardTarget, RangeSeries[]>([
  [requests!, [series({ route: '/api/a' }, [1, 2, NaN, 4, 3]), series({ route: '/api/b' }, [0.5, 0.5, 1, 1, 1])]],
  [empty!, []],
  [memory!, [series({ process: 'hemd' }, [1024, 1536, NaN])]],
])
const WIDTH = 1600

t.test('one panel per dashboard panel, at its grid position', { skip: noChromium }, async (t) => {
  t.same(
    panelsWithoutData(dashboard, answers).map((panel) => panel.id),
    [2],
    'the panel whose query found no series',
  )
  const { page, problems } = await openPage(t)
  await page.setViewportSize({ width: WIDTH, height: 900 })
  const window = { start: START, end: START + 40 }
  await page.setContent(dashboardPage(dashboard, answers, { window, width: WIDTH, caption: 'drawn by a test' }))
  const panels = page.locator('section.panel')
  t.same(await panels.evaluateAll((all) => all.map((p) => p.getAttribute('data-panel'))), ['1', '2', '3'])
  const [a, b, c] = await Promise.all([0, 1, 2].map(async (i) => (await panels.nth(i).boundingBox())!))
  const grid = (await page.locator('#grid').boundingBox())!
  t.ok(Math.abs(a!.x - grid.x) < 1 && Math.abs(a!.y - grid.y) < 1, 'x 0, y 0: the top left')
  t.equal(b!.y, a!.y, 'side by side')
  t.ok(Math.abs(b!.x - grid.x - (grid.width + 8) / 2) < 1, 'x 12: from the middle')
  t.ok(Math.abs(a!.width - b!.width) < 1 && Math.abs(a!.width * 2 + 8 - grid.width) < 1, 'w 12: half each')
  t.ok(Math.abs(a!.height - (8 * 38 - 8)) < 1, 'h 8: eight rows of 30 px and their gaps')
  t.ok(Math.abs(c!.y - a!.y - 8 * 38) < 1, 'y 8: below them')
  t.ok(Math.abs(c!.width - grid.width) < 1, 'w 24: the whole width')

  const first = panels.nth(0)
  t.same(await first.locator('.legend li').allTextContents(), ['/api/a', '/api/b'], 'legendFormat filled in')
  t.equal(await first.locator('polyline').count(), 3, "the NaN is a gap in the first line: two runs, and the second's")
  t.match(await first.locator('.y-axis').textContent(), /4 req\/s/, 'the axis in the unit')
  t.match(await first.locator('.x-axis').textContent(), /\d\d:\d\d:\d\d/, 'times on the time axis')
  t.equal(await panels.nth(1).locator('.no-data').textContent(), 'No data')
  t.equal(await panels.nth(1).locator('svg').count(), 0, 'no chart for it')
  t.equal(await panels.nth(2).locator('.stat').textContent(), '1.5 KiB', "the stat's last value, in its unit")
  t.match(await page.locator('footer').textContent(), 'drawn by a test')
  t.same(problems, [])
})
