// hem-cloud's POST /checkin (ext-auth contract §3.1) and device registry (§3.2) with a real device that
// trusts the development backend key: the round trip, pinning of the log key, the operator's policy and
// re-pin through `hem-cloud device`, and the registry surviving a restart of the cloud.
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import t from 'tap'
import { main } from '../cli/hem-cloud/index.js'
import { DeviceRegistry } from '../cloud/index.js'
import { testCloud, type TestCloud } from './helpers/cloud.js'
import { call, type Answer } from './helpers/http.js'
import { bearer, owned, type Owned } from './helpers/owner.js'

const post = (url: string, body: unknown): Promise<Answer> =>
  call(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

/** The device's check-in through the cloud: the device's own answer to the cloud's `checked`. */
async function roundTrip(o: Owned, test: TestCloud): Promise<{ cloud: Answer; device?: Answer }> {
  const check = (await call(`${o.base}/api/system/checkin`)).json.check as string
  const cloud = await post(`${test.cloud.url}/checkin`, { check })
  if (cloud.status !== 200) return { cloud }
  return { cloud, device: await post(`${o.base}/api/system/checkin`, { checked: cloud.json.checked }) }
}

/** A statement for `devid` signed by `key`, naming its public half as eid_sign (a device that is not that device). */
function forged(devid: string, key: KeyObject, extra: Record<string, unknown> = {}): string {
  const raw = key.export({ format: 'jwk' }) as { x: string }
  const statement = Buffer.from(
    JSON.stringify({
      devid,
      nonce: randomBytes(32).toString('base64'),
      iat: Math.floor(Date.now() / 1000),
      eid: randomBytes(32).toString('base64'),
      eid_sign: Buffer.from(raw.x, 'base64url').toString('base64'),
      ...extra,
    }),
  ).toString('base64url')
  return `${statement}.${sign(null, Buffer.from(statement), key).toString('base64url')}`
}

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await main(argv, {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
  })
  return { code, out, err }
}

t.test(
  'check-in through the cloud; the log key pinned on first sight; policy and re-pin; a restart keeps it',
  async (t) => {
    const o = await owned(t, { cfg: { trusted_backend: true } })
    const test = await testCloud(t)
    const devid = o.device.devid
    const config = (await call(`${o.base}/api/system/config`, { headers: bearer(o.token) })).json
    const registry = () => DeviceRegistry.open(test.cloud.state)

    const first = await roundTrip(o, test)
    t.equal(first.cloud.status, 200, first.cloud.text)
    t.match(first.device, { status: 200, json: { status: 'OK' } }, 'the device accepts the signed reply')
    const record = await (await registry()).get(devid)
    t.match(record, { eid: config.eid, eid_sign: config.eid_sign, last_checkin: Number }, 'registered and pinned')

    const stranger = generateKeyPairSync('ed25519').privateKey
    const refused = await post(`${test.cloud.url}/checkin`, { check: forged(devid, stranger) })
    t.match(refused, { status: 401, json: { error: 'unverified' } }, 'another key for a pinned devid: 401')
    t.same(await (await registry()).get(devid), record, 'and the registry unchanged')

    const oldDevid = 'abcdef0123456789'
    const older = forged(oldDevid, stranger, { eid: undefined, eid_sign: undefined })
    t.equal((await post(`${test.cloud.url}/checkin`, { check: older })).status, 200, 'an older statement gets a reply')
    t.equal(await (await registry()).get(oldDevid), undefined, 'but the registry learns nothing from it')

    await test.restart()
    t.equal(
      (await post(`${test.cloud.url}/checkin`, { check: forged(devid, stranger) })).status,
      401,
      'the pin survives a restart of the cloud',
    )
    t.match((await roundTrip(o, test)).device, { status: 200, json: { status: 'OK' } }, 'the device still checks in')

    t.match(await cli('device', 'repin', devid, '--data', test.dataDir), { code: 0 })
    t.equal(
      (await post(`${test.cloud.url}/checkin`, { check: forged(devid, stranger) })).status,
      200,
      'after a re-pin the next statement pins its key',
    )
    t.equal((await roundTrip(o, test)).cloud.status, 401, 'so that the old key is the stranger now')
    await cli('device', 'repin', devid, '--data', test.dataDir)

    const policy = await cli('device', 'policy', devid, 'lock', '--data', test.dataDir)
    t.equal(policy.code, 0, policy.err)
    t.match(JSON.parse(policy.out), { devid, policy: 'lock' })
    const locked = await roundTrip(o, test)
    t.match(locked.device, { status: 200, json: { status: 'LOCKED' } }, "the operator's order reaches the device")
    t.match(JSON.parse((await cli('device', 'show', devid, '--data', test.dataDir)).out), { devid, eid: config.eid })
  },
)

t.test('hem-cloud device: usage errors exit 2', async (t) => {
  t.equal((await cli('device', 'policy', 'nothex', 'lock', '--data', '/nowhere')).code, 2)
  t.equal((await cli('device', 'policy', '0123456789abcdef', 'reboot', '--data', '/nowhere')).code, 2)
  t.equal((await cli('device', 'show', '0123456789abcdef')).code, 2, 'neither --data nor --nats')
  t.match(await cli('device', 'show', '0123456789abcdef', '--data', '/nowhere'), { code: 1, err: /hem-cloud running/ })
})
