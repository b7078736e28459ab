import t from 'tap'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { startNats } from './helpers/nats.js'
import { until } from './helpers/until.js'

/** hemd answers HTTP all along (the waits below rethrow: a refused connection is a failure). */
async function statusCode(url: string): Promise<number> {
  return (await call(`${url}/api/system/status`)).status
}

t.test(
  'an external nats-server stopped: 503 with a JSON error; restarted: everything recovers without restarting hemd',
  async (t) => {
    const dir = t.testdir()
    let nats = await startNats(dir)
    t.teardown(() => nats.stop())
    const device = await bootDevice(t, { dataDir: `${dir}/data`, natsUrl: nats.url })
    t.equal(await statusCode(device.httpUrl!), 200)

    await nats.stop()
    await until('503 while the bus is down', async () => (await statusCode(device.httpUrl!)) === 503, { rethrow: true })
    const down = await call(`${device.httpUrl}/api/system/version`)
    t.equal(down.status, 503)
    t.equal(down.headers['content-type'], 'application/json')
    t.equal(down.json.error, 'bus_unavailable')

    nats = await startNats(dir, nats.port)
    await until('200 after the bus returned', async () => (await statusCode(device.httpUrl!)) === 200, {
      rethrow: true,
    })
    t.equal((await call(`${device.httpsUrl}/api/system/version`)).status, 200)
  },
)

t.test("the device's own nats-server killed: hemd restarts it and recovers", async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir() })
  const pid = device.natsPid!
  process.kill(pid, 'SIGKILL')
  await until('a new nats-server', async () => device.natsPid !== undefined && device.natsPid !== pid)
  t.not(device.natsPid, pid, 'a new nats-server')
  await until('200 again', async () => (await statusCode(device.httpUrl!)) === 200, { rethrow: true })
  t.equal(await statusCode(device.httpUrl!), 200, 'recovered: status 200 again')
})
