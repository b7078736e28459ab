// DIAG wipe_config (crypto-contract §6): no token, in any state, over HTTP and HTTPS; config, keys and
// disks erased as a wipeout does, journaled as a DIAG wipeout; a 200 without a body on a connection
// the gateway closes; then the device restarts fresh.
import { connect as netConnect } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import t, { type Test } from 'tap'
import { sendSimCommand } from '../cli/hemd/sim-cli.js'
import { authOperations } from '../actors/auth/operations.js'
import type { AuthContext } from '../actors/auth/auth-context.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { expectFresh } from './helpers/fresh-device.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { createKey, Tokens } from './helpers/keys.js'
import { boots, rebooted } from './helpers/model-device.js'
import { bearer, owned } from './helpers/owner.js'

/** One GET on a raw connection: all the device sent until it closed the connection. */
function rawGet(url: string, path: string): Promise<string> {
  const { protocol, hostname, port } = new URL(url)
  const request = `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`
  const socket =
    protocol === 'https:'
      ? tlsConnect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => socket.write(request))
      : netConnect({ host: hostname, port: Number(port) }, () => socket.write(request))
  return new Promise((resolve, reject) => {
    let text = ''
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk))
    socket.on('close', () => resolve(text))
    socket.on('error', reject)
  })
}

/** wipe_config over `url` (path `path`); checks its answer, then waits for the restart it orders. */
async function wipeConfig(t: Test, url: string, dataDir: string, path = '/api/diag/wipe_config'): Promise<void> {
  const before = await boots(dataDir)
  const answer = await rawGet(url, path)
  const [head, body] = answer.split('\r\n\r\n') as [string, string]
  t.match(head, /^HTTP\/1\.1 200 /, 'answered 200')
  t.match(head, /\r\nContent-Length: 0(\r\n|$)/i, 'with no body')
  t.equal(body, '')
  t.match(head, /\r\nConnection: close(\r\n|$)/i, 'and the gateway closes the connection itself')
  await rebooted(url, dataDir, before)
}

/** The DIAG wipeout's CONFIG_UPDATED records: OK, naming no principal. */
async function diagWipeouts(t: Test, dataDir: string): Promise<number> {
  const records = (await readJournal(dataDir)).records.filter(
    (r) => r.type === LogType.CONFIG_UPDATED && r.decoded?.diag === true,
  )
  for (const r of records) {
    t.match(r.decoded, { source: 200, wipeout: true, diag: true }, 'journaled as a DIAG wipeout')
    t.equal(r.result, LogResult.OK)
    t.notOk(r.subject, 'asked by no principal')
  }
  return records.length
}

async function hold(o: { base: string; https: string }): Promise<Tokens> {
  const tokens = new Tokens(o.base)
  await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'gone', type: 'AES256' })
  return tokens
}

t.test('P, over HTTPS without a token: owner, key, disks and hostname go; the device restarts fresh', async (t) => {
  const o = await owned(t, { variant: 'P', cfg: { hostname: 'vault.lab' }, boot: { diag: true } })
  await hold(o)
  t.equal((await call(`${o.base}/api/system/status`)).json.hostname, 'vault.lab')
  await wipeConfig(t, o.https, o.device.dataDir)
  await expectFresh(t, o.base, o.device.dataDir, 'P')
  t.equal(await diagWipeouts(t, o.device.dataDir), 1)
})

t.test(
  'E, over HTTP with trailing spaces, while in a fail state: accepted, and the device restarts fresh',
  async (t) => {
    const o = await owned(t, { variant: 'E', cfg: { hostname: 'vault.lab' }, boot: { diag: true } })
    await hold(o)
    const hot = await sendSimCommand(o.device.dataDir, { action: 'temperature', celsius: 95 })
    t.equal((hot.body as { fls_state: number }).fls_state, 0x04, 'fls_state 0x04')
    await wipeConfig(t, o.base, o.device.dataDir, '/api/diag/wipe_config%20%20%20')
    // The sensor still reads what the simulation set: back to normal, the fault clears.
    await sendSimCommand(o.device.dataDir, { action: 'temperature', celsius: null })
    await expectFresh(t, o.base, o.device.dataDir, 'E')
    t.equal(await diagWipeouts(t, o.device.dataDir), 1)
  },
)

t.test('a device never personalised is wiped and restarted too', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  await wipeConfig(t, device.httpUrl!, device.dataDir)
  await expectFresh(t, device.httpUrl!, device.dataDir, 'E')
  t.equal(await diagWipeouts(t, device.dataDir), 1)
})

t.test('a present but invalid token is refused (401) and wipes nothing', async (t) => {
  const o = await owned(t, { variant: 'E', boot: { diag: true } })
  const answer = await call(`${o.base}/api/diag/wipe_config`, { headers: bearer('forged.token.here') })
  t.equal(answer.status, 401)
  t.notOk('inited' in (await call(`${o.base}/api/system/status`)).json, 'still personalised')
  t.equal(await diagWipeouts(t, o.device.dataDir), 0)
})

t.test('the auth service has diag_wipe_config only in a DIAG build', async (t) => {
  const actor = (diag: boolean) => ({ diag, guard: { operation: () => ({}) } }) as unknown as AuthContext
  t.notOk('diag_wipe_config' in authOperations(actor(false)))
  t.ok('diag_wipe_config' in authOperations(actor(true)))
})
