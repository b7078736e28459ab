// deploy/grafana/hemd-dashboard.json cannot drift from the device: every metric its queries name is in /metrics.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { bootDevice, repoRoot } from './helpers/device.js'
import { call } from './helpers/http.js'
import { seriesNames } from './helpers/metrics.js'

interface Panel {
  title: string
  datasource: { uid: string }
  targets: { expr: string; datasource: { uid: string } }[]
}

t.test('every metric the dashboard queries is one the device shows', async (t) => {
  const dashboard = JSON.parse(await readFile(join(repoRoot, 'deploy/grafana/hemd-dashboard.json'), 'utf8')) as {
    panels: Panel[]
    __inputs: { name: string }[]
  }
  t.same(
    dashboard.__inputs.map((input) => input.name),
    ['DS_PROMETHEUS'],
    'the datasource is a variable',
  )
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', metrics: { host: '127.0.0.1', port: 0 } })
  // A request of each kind the panels break down, so that their series exist.
  await call(`${device.httpUrl}/api/system/status`)
  const shown = seriesNames((await call(`${device.metricsUrl}/metrics`)).text)
  const queried = dashboard.panels.flatMap((panel) => panel.targets.map((target) => [panel, target.expr] as const))
  t.ok(queried.length >= 15, 'the panels the issue names')
  for (const [panel, expr] of queried) {
    t.equal(panel.datasource.uid, '${DS_PROMETHEUS}', `${panel.title}: on the datasource variable`)
    const names = expr.match(/\bhem_[a-z0-9_]+/g) ?? []
    t.ok(names.length > 0, `${panel.title}: queries a hem_ metric`)
    for (const name of names) t.ok(shown.has(name), `${panel.title}: ${name} is in /metrics`)
  }
})
