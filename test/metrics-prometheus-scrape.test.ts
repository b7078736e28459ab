// A real Prometheus (Debian's prometheus package) scrapes a device's --metrics listener, and its query API answers.
import t from 'tap'
import { join } from 'node:path'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { havePrometheus, valueOf } from './helpers/metrics.js'
import { type InstantSeries, startPrometheus } from './helpers/prometheus.js'
import { until } from './helpers/until.js'

t.test('Prometheus scrapes the device', { skip: !havePrometheus && 'prometheus is not installed' }, async (t) => {
  // One testdir per test (a second call empties the first): the device's data and Prometheus's apart in it.
  const dir = t.testdir()
  const metrics = { host: '127.0.0.1', port: 0 }
  const device = await bootDevice(t, { dataDir: join(dir, 'device'), variant: 'E', metrics })
  const prometheus = await startPrometheus(t, dir, [new URL(device.metricsUrl!).host])
  let result: InstantSeries[] = []
  await until(`a series in Prometheus (its log: ${prometheus.log()})`, async () => {
    if (prometheus.exited()) throw new Error(`prometheus exited: ${prometheus.log()}`)
    result = await prometheus.query('hem_key_slots_free')
    return result.length === 1
  })
  const scraped = valueOf((await call(`${device.metricsUrl}/metrics`)).text, 'hem_key_slots_free')!
  t.ok(scraped > 0, 'a device with room for keys')
  t.equal(Number(result[0]!.value[1]), scraped, 'Prometheus holds what the device shows')
  t.equal(result[0]!.metric.job, 'hemd', 'under its scrape job')
  const up = await prometheus.query('up{job="hemd"}')
  t.equal(up[0]?.value[1], '1', 'the target is up')
})
