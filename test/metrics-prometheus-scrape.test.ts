// A real Prometheus (Debian's prometheus package) scrapes a device's --metrics listener, and its query API answers.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { bootDevice, freePort } from './helpers/device.js'
import { call } from './helpers/http.js'
import { havePrometheus, valueOf } from './helpers/metrics.js'
import { until } from './helpers/until.js'

t.test('Prometheus scrapes the device', { skip: !havePrometheus && 'prometheus is not installed' }, async (t) => {
  // One testdir per test (a second call empties the first): the device's data and Prometheus's apart in it.
  const dir = t.testdir()
  const metrics = { host: '127.0.0.1', port: 0 }
  const device = await bootDevice(t, { dataDir: join(dir, 'device'), variant: 'E', metrics })
  const target = new URL(device.metricsUrl!).host
  const config = join(dir, 'prometheus.yml')
  await writeFile(
    config,
    [
      'scrape_configs:',
      '  - job_name: hemd',
      '    scrape_interval: 1s',
      `    static_configs: [{ targets: ['${target}'] }]`,
    ]
      .concat('')
      .join('\n'),
  )
  const port = await freePort()
  const prometheus = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let log = ''
  prometheus.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()))
  const exited = once(prometheus, 'exit')
  t.teardown(async () => {
    if (prometheus.exitCode === null && prometheus.signalCode === null) prometheus.kill('SIGTERM')
    await exited
  })
  const query = async (expr: string) =>
    (await call(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`)).json as {
      data: { result: { metric: Record<string, string>; value: [number, string] }[] }
    }
  let result: { metric: Record<string, string>; value: [number, string] }[] = []
  await until(`a series in Prometheus (its log: ${log})`, async () => {
    if (prometheus.exitCode !== null) throw new Error(`prometheus exited: ${log}`)
    result = (await query('hem_key_slots_free')).data.result
    return result.length === 1
  })
  const scraped = valueOf((await call(`${device.metricsUrl}/metrics`)).text, 'hem_key_slots_free')!
  t.ok(scraped > 0, 'a device with room for keys')
  t.equal(Number(result[0]!.value[1]), scraped, 'Prometheus holds what the device shows')
  t.equal(result[0]!.metric.job, 'hemd', 'under its scrape job')
  const up = (await query('up{job="hemd"}')).data.result
  t.equal(up[0]?.value[1], '1', 'the target is up')
})
