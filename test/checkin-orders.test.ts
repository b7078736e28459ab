// A trusted backend's check-in reply may lock the device (fls 0x40) or shut it down
// (0x80) until the next boot; anything it did not sign, or signed for another nonce or device, is refused.
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { signCheckinReply } from '../protocol/checkin.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { DEV_BACKEND_PUBLIC_KEY } from '../hal/sim/backend-key-dev.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'
import { api, b64, createKey, Tokens } from './helpers/keys.js'
import { owned, type Owned } from './helpers/owner.js'
import { until } from './helpers/until.js'

const backend = createPrivateKey(readFileSync(new URL('../deploy/keys/backend-dev.pem', import.meta.url)))

t.test('the development backend key the sim HAL trusts is the one in deploy/keys', async (t) => {
  const raw = createPublicKey(backend).export({ format: 'der', type: 'spki' }).subarray(-32)
  t.equal(raw.toString('base64'), DEV_BACKEND_PUBLIC_KEY)
})

async function checkIn(o: Owned, sign: (check: string) => string): Promise<Answer> {
  const check = (await call(`${o.base}/api/system/checkin`)).json.check as string
  return post(o, sign(check))
}

function post(o: Owned, checked: string): Promise<Answer> {
  return call(`${o.base}/api/system/checkin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ checked }),
  })
}

const trusted = { cfg: { trusted_backend: true } }

t.test('refused: a reply the backend did not sign, signed for another device, replayed, or malformed', async (t) => {
  const o = await owned(t, trusted)
  const stranger = generateKeyPairSync('ed25519').privateKey
  t.match(
    await checkIn(o, (check) => signCheckinReply(check, stranger, { action: 'lock' })),
    { status: 406, json: { error: 'backend_unverified' } },
    'another key',
  )
  const forOther = (check: string) => {
    const [statement, signature] = check.split('.') as [string, string]
    const claims = JSON.parse(Buffer.from(statement, 'base64url').toString())
    return signCheckinReply(
      `${Buffer.from(JSON.stringify({ ...claims, devid: 'ffffffffffffffff' })).toString('base64url')}.${signature}`,
      backend,
      { action: 'lock' },
    )
  }
  t.match(await checkIn(o, forOther), { status: 406, json: { message: /another device/ } })
  t.match(
    await checkIn(o, (check) =>
      signCheckinReply(
        check.replace(
          /^[^.]+/,
          Buffer.from(JSON.stringify({ devid: o.device.devid, nonce: Buffer.alloc(32).toString('base64') })).toString(
            'base64url',
          ),
        ),
        backend,
      ),
    ),
    { status: 406, json: { message: /no live check-in/ } },
    'a nonce the device never issued',
  )
  const check = (await call(`${o.base}/api/system/checkin`)).json.check as string
  const good = signCheckinReply(check, backend)
  t.match(
    await post(o, good),
    { status: 200, json: { status: 'OK' } },
    'a signed reply without an order is acknowledged',
  )
  t.match(await post(o, good), { status: 406 }, 'but good once')
  for (const bad of [
    'x',
    'a.b.c',
    `${good}x`,
    `${good.split('.')[0]}.${Buffer.alloc(64).toString('base64url')}`,
    '!!.??',
  ]) {
    t.equal((await post(o, bad)).status, 406, `malformed ${bad.slice(0, 20)}`)
  }
  t.equal((await call(`${o.base}/api/system/status`)).json.fls_state, 0, 'none of it changed the fail state')
})

t.test('without trusted_backend a reply is acknowledged and obeyed in nothing', async (t) => {
  const o = await owned(t)
  t.match(await checkIn(o, (check) => signCheckinReply(check, backend, { action: 'lock' })), {
    status: 200,
    json: { status: 'OK' },
  })
  t.equal((await call(`${o.base}/api/system/status`)).json.fls_state, 0)
})

t.test('lock: 0x40 until the next boot, whatever clears meanwhile', async (t) => {
  const o = await owned(t, trusted)
  const tokens = new Tokens(o.base)
  const kid = await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'locked', type: 'AES256' })
  const use = await tokens.get(`keymgmt:use:${kid}`)
  const encrypt = () =>
    api(`${o.https}/api/crypto/cipher/encrypt`, use, { alg: 'AES256-GCM', kid, msg: b64(Buffer.from('x')) })
  t.match(await checkIn(o, (check) => signCheckinReply(check, backend, { action: 'lock' })), {
    status: 200,
    json: { status: 'LOCKED' },
  })
  await until('fls_state 0x40', async () => (await call(`${o.base}/api/system/status`)).json.fls_state === 0x40, {
    rethrow: true,
  })
  t.equal((await encrypt()).status, 409)
  const { records } = await readJournal(o.device.dataDir)
  t.match(
    records.filter((r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'health'),
    [{ decoded: { from: 'secure', to: 'locked', event: 'CHECKIN_LOCK' } }],
  )
  t.match(
    records.filter((r) => r.type === LogType.NON_SECURE_STATE),
    [{ result: LogResult.ERROR, decoded: { fls: 0x40, raised: 0x40, source: 'checkin' } }],
  )
  await o.device.restart()
  await until(
    'secure after the reboot',
    async () => (await call(`${o.base}/api/system/status`).catch(() => undefined))?.json?.fls_state === 0,
  )
})

t.test('shutdown: 0x80 journaled, then the device stops with its journal sealed', async (t) => {
  const o = await owned(t, trusted)
  t.match(await checkIn(o, (check) => signCheckinReply(check, backend, { action: 'shutdown' })), {
    status: 200,
    json: { status: 'SHUTDOWN' },
  })
  await o.device.stopped
  const { records } = await readJournal(o.device.dataDir)
  t.match(
    records.filter((r) => r.type === LogType.NON_SECURE_STATE),
    [{ decoded: { fls: 0x80, raised: 0x80, source: 'checkin' } }],
  )
  t.equal(
    records.filter((r) => r.type !== LogType.TRANSITION && r.type < 0x80).at(-1)?.type,
    LogType.SHUTDOWN,
    'SHUTDOWN is the last event',
  )
  t.ok((await verifyDataDir(o.device.dataDir, o.device.logPublicKey)).ok)
})

t.test("a flood of check-in challenges from one client does not evict another client's nonce", async (t) => {
  const o = await owned(t, trusted)
  const backendClient = { localAddress: '127.0.0.2' }
  const check = (await call(`${o.base}/api/system/checkin`, backendClient)).json.check as string
  for (let sent = 0; sent < 1100; sent += 50)
    await Promise.all(Array.from({ length: 50 }, () => call(`${o.base}/api/system/checkin`)))
  t.match(await post(o, signCheckinReply(check, backend, {})), { status: 200, json: { status: 'OK' } })
})
