// The DIAG faults over real HTTP (crypto-contract §6): break_temp and break_trng put the device in
// its fail state before they answer; while it lasts crypto and key management answer 409, reads and
// the self-test still answer; a reboot clears both, as the hardware's would.
import { performance } from 'node:perf_hooks'
import t, { type Test } from 'tap'
import { FLS } from '../protocol/fail-state.js'
import { LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { diag, diagOk, flsShown, rebootOver, selfTest } from './helpers/diag.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { api, b64, createKey, Tokens } from './helpers/keys.js'
import { bearer, owned, type Owned } from './helpers/owner.js'

/** The contract's bound for break_temp is 1 s, for break_trng 20 s; the device meets both before it answers. */
const SHOWN_MS = 10_000

function encrypt(o: Owned, kid: string, use: string) {
  return api(`${o.https}/api/crypto/cipher/encrypt`, use, { alg: 'AES256-GCM', kid, msg: b64(Buffer.from('diag')) })
}

/** Breaks with a DIAG route and waits for the bits; prints how long status took to show them. */
async function breakWith(t: Test, base: string, path: string, fls: number) {
  const start = performance.now()
  const answer = await diagOk(base, path)
  const ms = performance.now() - start + (await flsShown(base, fls, SHOWN_MS))
  t.comment(`${path}: status showed fls_state 0x${fls.toString(16)} ${Math.round(ms)} ms after the request`)
  return answer
}

t.test('break_temp, then break_trng: the fail state, its 409s, what still answers, and a reboot', async (t) => {
  const o = await owned(t, { variant: 'P', boot: { diag: true } })
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  const list = await tokens.get('keymgmt:list')
  const config = await tokens.get('system:config')
  const kid = await createKey(o.https, gen, { label: 'diag', type: 'AES256' })
  const use = await tokens.get(`keymgmt:use:${kid}`)
  t.equal((await encrypt(o, kid, use)).status, 200, 'secure: the key encrypts')

  const temp = await breakWith(t, o.base, 'break_temp', FLS.TEMPERATURE)
  t.equal(temp.text, '', 'break_temp answers an empty 200')

  const refused = { status: 409, json: { error: 'device_fault' } }
  t.match(await encrypt(o, kid, use), refused, 'crypto: 409')
  t.match(await api(`${o.https}/api/keymgmt/create`, gen, { label: 'more', type: 'AES256' }), refused, 'create: 409')
  t.match(await api(`${o.https}/api/keymgmt/list`, list), refused, 'list: 409')
  t.equal((await call(`${o.base}/api/system/version`)).status, 200, 'reads still answer: version')
  t.equal((await call(`${o.base}/api/system/config`, { headers: bearer(config) })).status, 200, '...and config')
  t.equal((await diag(o.base, 'test')).status, 200, 'the DIAG routes too')
  const tested = await selfTest(o.base, config)
  t.equal(tested.status, 200, 'the self-test answers in the fail state')
  t.match(tested.json, { fls_state: FLS.TEMPERATURE, repo_stats: { total: 1, invalid: 0 }, se_state: 0 })
  t.notOk('kat_busy' in tested.json, 'synchronous: no kat_busy')

  const trng = await breakWith(t, o.base, 'break_trng', FLS.TEMPERATURE | FLS.ENTROPY)
  t.match(trng.json, { mode: 1, last_ts: Number, last_val: Number }, 'break_trng: {mode, last_ts, last_val}')
  t.ok(Number.isInteger(trng.json.last_val) && trng.json.last_val >= 0 && trng.json.last_val <= 255, 'a raw byte')
  t.ok(Math.abs(trng.json.last_ts - Date.now() / 1000) < 300, 'last_ts: Unix seconds, now')
  const again = await diag(o.base, 'break_trng')
  t.equal(again.status, 200, 'break_trng again: 200')
  t.match(again.json, { mode: 1 })

  const { records } = await readJournal(o.device.dataDir)
  t.equal(records.filter((r) => r.type === LogType.TRNG_FAILED).at(-1)?.decoded?.fls, FLS.TEMPERATURE | FLS.ENTROPY)
  t.ok(
    records.some((r) => r.type === LogType.NON_SECURE_STATE && r.decoded?.raised === FLS.TEMPERATURE),
    'the temperature fault journaled',
  )

  await rebootOver(o.base, o.device.dataDir, config)
  await flsShown(o.base, 0)
  const fresh = new Tokens(o.base)
  t.equal((await encrypt(o, kid, await fresh.get(`keymgmt:use:${kid}`))).status, 200, 'after the reboot: encrypts')
  t.equal((await api(`${o.https}/api/keymgmt/list`, await fresh.get('keymgmt:list'))).status, 200, '...and lists')
  t.equal((await diag(o.base, 'test')).status, 200)
})

t.test('a device never personalised: break_trng reaches its fail state; its self-test needs no token', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  const base = device.httpUrl!
  await breakWith(t, base, 'break_trng', FLS.ENTROPY)
  const tested = await selfTest(base)
  t.equal(tested.status, 200)
  t.match(tested.json, { fls_state: FLS.ENTROPY, repo_stats: { total: 0, deleted: 0, invalid: 0 } })
  t.notOk('se_state' in tested.json, 'se_state on P only')
})
