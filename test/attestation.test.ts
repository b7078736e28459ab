// The attestation and provisioning state table (seed §3, contract §3) on real devices: a fresh
// P device shows {genuine, csr}; the factory's answer provisions it once; then {crt, genuine}
// for good, across reboots (replayed from the journal) and wipeouts (factory state).
import { hostClock } from '../hal/sim/host-clock.js'
import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeFile } from 'node:fs/promises'
import t, { type Test } from 'tap'
import { decodeBase64 } from '../protocol/base64.js'
import { main as factoryMain } from '../cli/hem-factory/factory-cli.js'
import { signAttestation, type FactoryCa, type SignedAttestation } from '../factory/sign-attestation.js'
import type { Device } from '../runtime/types.js'
import { LogType } from '../protocol/journal.js'
import { openHal, type Clock, type EntropySource } from '../hal/index.js'
import { parseGenuine } from '../hal/x509/genuine-statement.js'
import { b64 } from './helpers/base64.js'
import { bootDevice, builtFirmware } from './helpers/device.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { bearer, login, personalise } from './helpers/owner.js'
import { until } from './helpers/until.js'
import { makeCa } from './helpers/x509-fixtures.js'

const devCa: FactoryCa = {
  key: createPrivateKey(readFileSync(new URL('../deploy/keys/factory-ca-dev.key.pem', import.meta.url), 'utf8')),
  cert: new Uint8Array(
    new X509Certificate(readFileSync(new URL('../deploy/keys/factory-ca-dev.crt.pem', import.meta.url))).raw,
  ),
}
const body = (record: { crt: Uint8Array; genuine: Uint8Array }) => ({
  crt: b64(record.crt),
  genuine: b64(record.genuine),
})

// A directory of this run's own: t.testdir() is shared by every concurrent run of this file.
const root = mkdtempSync(join(tmpdir(), 'hemd-attestation-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0
const newDir = (name: string) => join(root, `${++dirs}-${name}`)

const ATTESTATION = '/api/system/config/attestation'
const PROVISIONING = '/api/system/config/provisioning'

function getAttestation(device: Device, token?: string): Promise<Answer> {
  return call(`${device.httpUrl}${ATTESTATION}`, token === undefined ? {} : { headers: bearer(token) })
}

function postProvisioning(device: Device, payload: unknown, token?: string): Promise<Answer> {
  return call(`${device.httpUrl}${PROVISIONING}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : bearer(token)) },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  })
}

/** The attestation request a fresh, unprovisioned device shows, checked on the way. */
async function attestationRequest(t: Test, device: Device) {
  const answer = await getAttestation(device)
  t.equal(answer.status, 200, `GET attestation: ${answer.text}`)
  t.strictSame(Object.keys(answer.json ?? {}).sort(), ['csr', 'genuine'], 'unprovisioned: {genuine, csr}')
  const request = { csr: decodeBase64(answer.json.csr)!, genuine: decodeBase64(answer.json.genuine)! }
  t.match(parseGenuine(request.genuine), { kind: 'device', devid: device.devid }, 'the device self-statement')
  return request
}

async function provisioningTransitions(device: Device) {
  return (await readJournal(device.dataDir)).records
    .filter((r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'provisioning')
    .map((r) => ({ from: r.decoded?.from, to: r.decoded?.to, event: r.decoded?.event }))
}

/** Status, polled until `check` holds (connections refused during a reboot count as not yet). */
async function untilStatus(
  device: Device,
  what: string,
  check: (status: Record<string, unknown>) => boolean,
): Promise<void> {
  await until(what, async () => {
    const status = await call(`${device.httpUrl}/api/system/status`)
    return status.status === 200 && check(status.json)
  })
}

/** A factory answer for the attestation key of another enclave (a second P HAL), signed by the dev CA. */
async function answerForAnotherEnclave(dataDir: string): Promise<SignedAttestation> {
  const other = await openHal({ variant: 'P', dataDir, firmware: await builtFirmware() })
  try {
    return await signAttestation(other.enclave.attestation(), devCa)
  } finally {
    await other.close()
  }
}

/** POST config {wipeout: true}, then wait for the reboot into a fresh device. */
async function wipeout(t: Test, device: Device): Promise<void> {
  const token = await login(device.httpUrl!, 'system:config')
  const answer = await call(`${device.httpUrl}/api/system/config`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(token) },
    body: JSON.stringify({ wipeout: true }),
  })
  t.equal(answer.status, 200, `wipeout: ${answer.text}`)
  // The reboot follows the answer: the token it killed says when it happened.
  await until(
    'the reboot after the wipeout',
    async () =>
      (await call(`${device.httpUrl}/api/system/config`, { headers: bearer(token) }).catch(() => undefined))?.status ===
      401,
  )
  await untilStatus(device, 'fresh after the wipeout', (s) => s.inited === false)
}

t.test('P: the provisioning state table, across a reboot, personalisation and a wipeout', async (t) => {
  const dir = newDir('table')
  const device = await bootDevice(t, { dataDir: `${dir}/device` })
  const request = await attestationRequest(t, device)
  const signed = await signAttestation(request, devCa)
  t.equal(signed.devid, device.devid)

  // Refusals while unprovisioned change nothing.
  for (const [label, payload, status, error] of [
    ['not JSON', '{"crt":', 400, 'malformed_json'],
    ['no genuine', { crt: b64(signed.crt) }, 400, 'invalid_body'],
    ['crt not base64', { crt: '!!not base64!!', genuine: b64(signed.genuine) }, 400, undefined],
    ['empty crt', { crt: '', genuine: b64(signed.genuine) }, 400, undefined],
    [
      'crt not DER',
      { crt: b64(Buffer.from('garbage, not a certificate')), genuine: b64(signed.genuine) },
      400,
      'malformed',
    ],
    ['genuine not a statement', { crt: b64(signed.crt), genuine: b64(Buffer.from('garbage')) }, 400, 'malformed'],
  ] as const) {
    const answer = await postProvisioning(device, payload)
    t.equal(answer.status, status, `${label} → ${status}`)
    if (error) t.equal(answer.json?.error, error, `${label}: ${error}`)
  }
  const other = await answerForAnotherEnclave(`${dir}/other-enclave`)
  const foreignKey = await postProvisioning(device, body(other))
  t.equal(foreignKey.status, 406, 'a crt (and genuine) for another enclave key → 406')
  t.equal(foreignKey.json?.error, 'key_mismatch')
  t.equal(
    (await postProvisioning(device, { crt: b64(other.crt), genuine: b64(signed.genuine) })).status,
    406,
    'a crt for another key with the right genuine → 406',
  )
  t.equal(
    (await postProvisioning(device, { crt: b64(signed.crt), genuine: b64(other.genuine) })).status,
    406,
    'the right crt with the genuine of another enclave → 406',
  )
  const rogue = await signAttestation(request, await makeCa('Rogue Factory'))
  const rogueAnswer = await postProvisioning(device, body(rogue))
  t.equal(rogueAnswer.status, 406, 'issued by another CA → 406')
  t.equal(rogueAnswer.json?.error, 'bad_signature')
  t.strictSame(
    (await getAttestation(device)).json,
    { genuine: b64(request.genuine), csr: b64(request.csr) },
    'still unprovisioned',
  )
  t.strictSame(await provisioningTransitions(device), [], 'no provisioning transition yet')

  // The factory's answer: once.
  const provisioned = await postProvisioning(device, body(signed))
  t.equal(provisioned.status, 200, `POST provisioning: ${provisioned.text}`)
  t.strictSame(
    await provisioningTransitions(device),
    [{ from: 'unprovisioned', to: 'provisioned', event: 'PROVISION' }],
    'one TRANSITION of machine provisioning',
  )
  const expected = body(signed)
  t.strictSame(
    (await getAttestation(device)).json,
    expected,
    'provisioned: {crt, genuine}, no token needed while fresh',
  )
  const again = await postProvisioning(device, body(signed))
  t.equal(again.status, 406, 'a second POST → 406')
  t.equal(again.json?.error, 'already_provisioned')
  t.equal((await postProvisioning(device, body(other))).status, 406, 'any later POST → 406 (another key)')
  t.equal(
    (await postProvisioning(device, { crt: 'AAAA', genuine: 'AAAA' })).status,
    406,
    'any later POST → 406 (garbage)',
  )

  // A reboot: the machine is replayed from the journal, the record stays in the enclave.
  await device.restart()
  await untilStatus(device, 'up after the reboot', () => true)
  t.strictSame((await getAttestation(device)).json, expected, 'after a reboot: {crt, genuine}')
  t.equal((await postProvisioning(device, body(signed))).status, 406, 'after a reboot: still provisioned (406)')

  // Personalised: provisioning refused with 403, attestation needs a token of any scope.
  const init = await personalise(device.httpUrl!, 'P')
  t.equal(init.status, 200, init.text)
  const refused = await postProvisioning(device, body(signed))
  t.equal(refused.status, 403, 'personalised device → 403')
  t.equal(refused.json?.error, 'device_personalised')
  const withToken = await postProvisioning(device, body(signed), init.json.token)
  t.equal(withToken.status, 403, 'personalised device → 403, token or not')
  const anonymous = await getAttestation(device)
  t.equal(anonymous.status, 401, 'personalised: GET attestation without a token → 401')
  t.equal((await getAttestation(device, `${init.json.token}x`)).status, 401, 'an invalid token → 401')
  for (const scope of ['logger:get', 'keymgmt:list', 'storage:disk1:rw']) {
    const answer = await getAttestation(device, await login(device.httpUrl!, scope))
    t.equal(answer.status, 200, `any scope works: ${scope}`)
    t.strictSame(answer.json, expected, `${scope}: {crt, genuine}`)
  }
  const denials = (await readJournal(device.dataDir)).records.filter((r) => r.type === LogType.FAILED_SCOPE_CHECK)
  t.strictSame(denials, [], 'no scope check failed on the way')

  // A wipeout resets personalisation, not the factory's provisioning.
  await wipeout(t, device)
  t.strictSame(
    (await getAttestation(device)).json,
    expected,
    'after the wipeout: still {crt, genuine}, no token needed',
  )
  t.equal((await postProvisioning(device, body(signed))).status, 406, 'after the wipeout: still provisioned (406)')
  t.strictSame(
    await provisioningTransitions(device),
    [{ from: 'unprovisioned', to: 'provisioned', event: 'PROVISION' }],
    'still one provisioning transition',
  )
})

t.test('P: personalised before provisioning → 403; after a wipeout hem-factory provisions it', async (t) => {
  const device = await bootDevice(t, { dataDir: newDir('factory-cli') })
  const request = await attestationRequest(t, device)
  const signed = await signAttestation(request, devCa)
  const init = await personalise(device.httpUrl!, 'P')
  t.equal(init.status, 200, init.text)
  t.equal(
    (await postProvisioning(device, body(signed))).status,
    403,
    'personalised, unprovisioned → 403 for a good answer',
  )
  const unprovisioned = await getAttestation(device, init.json.token)
  t.strictSame(Object.keys(unprovisioned.json ?? {}).sort(), ['csr', 'genuine'], 'still unprovisioned')
  t.strictSame(await provisioningTransitions(device), [])

  await wipeout(t, device)
  let out = ''
  let err = ''
  const io = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } }
  t.equal(await factoryMain(['provision', '--url', device.httpUrl!], io), 0, `hem-factory provision: ${err}`)
  t.match(out, new RegExp(`provisioned \\S+ \\(devid ${device.devid}\\)`))
  const answer = await getAttestation(device)
  t.strictSame(Object.keys(answer.json ?? {}).sort(), ['crt', 'genuine'], 'provisioned')
  const crt = new X509Certificate(decodeBase64(answer.json.crt)!)
  t.ok(crt.checkIssued(new X509Certificate(devCa.cert)), 'by the development factory CA')
  t.strictSame(await provisioningTransitions(device), [
    { from: 'unprovisioned', to: 'provisioned', event: 'PROVISION' },
  ])
  err = ''
  t.equal(
    await factoryMain(['provision', '--url', device.httpUrl!], io),
    1,
    'a second hem-factory provision is refused',
  )
  t.match(err, /already provisioned/)
})

t.test(
  'P: an enclave provisioned while the device was off is provisioned for the API too (406, no false transition)',
  async (t) => {
    const dataDir = newDir('offline')
    const first = await bootDevice(t, { dataDir })
    const signed = await signAttestation(await attestationRequest(t, first), devCa)
    await first.stop()
    const hal = await openHal({ variant: 'P', dataDir, firmware: await builtFirmware() })
    await hal.enclave.provision(signed)
    await hal.close()
    const device = await bootDevice(t, { dataDir })
    t.strictSame((await getAttestation(device)).json, body(signed), 'GET attestation shows the enclave record')
    const again = await postProvisioning(device, body(signed))
    t.equal(again.status, 406, `POST provisioning → 406: ${again.text}`)
    t.equal(again.json?.error, 'already_provisioned')
    t.strictSame(await provisioningTransitions(device), [], 'nothing journaled for a refusal')
  },
)

t.test('P: the certificate validity is checked only while the clock is set', async (t) => {
  const dir = newDir('clock')
  const y2000 = Date.parse('2000-01-01T00:00:00Z')
  const rtc = (isSet: boolean): Clock => ({
    now: () => y2000 + performance.now(),
    monotonic: () => performance.now(),
    isSet: () => isSet,
    sleep: hostClock.sleep,
    timer: hostClock.timer,
  })
  // A factory-fresh RTC that was never set: the factory's certificate (valid from now) must still go in.
  const unset = await bootDevice(t, { dataDir: `${dir}/unset`, clock: rtc(false) })
  const forUnset = await postProvisioning(unset, body(await signAttestation(await attestationRequest(t, unset), devCa)))
  t.equal(forUnset.status, 200, `clock not set → provisioned: ${forUnset.text}`)
  // A set clock is believed: in 2000 the certificate is not valid yet.
  const set = await bootDevice(t, { dataDir: `${dir}/set`, clock: rtc(true) })
  const forSet = await postProvisioning(set, body(await signAttestation(await attestationRequest(t, set), devCa)))
  t.equal(forSet.status, 406, 'clock set to 2000 → 406')
  t.equal(forSet.json?.error, 'bad_signature')
  t.match(forSet.json?.message, /valid from/)
})

t.test('P: attestation answers 409 while fls_state ≠ 0', async (t) => {
  const dataDir = newDir('fls')
  const first = await bootDevice(t, { dataDir })
  await first.stop()
  const { files } = await readJournal(dataDir)
  const path = `${dataDir}/journal/${files[0]!.id}.log`
  const text = Buffer.from(files[0]!.bytes).toString('utf8')
  // Flip the STARTUP record's result: the line still parses, but its MAC and the chain break.
  const tampered = text.replace(/\n(2\|[0-9a-f]+\|1\|)0\|/, '\n$12|')
  t.not(tampered, text, 'the journal was tampered with')
  await writeFile(path, tampered)
  const device = await bootDevice(t, { dataDir })
  t.equal((await call(`${device.httpUrl}/api/system/status`)).json.fls_state, 0x08, 'fls_state 0x08')
  t.equal((await getAttestation(device)).status, 409, 'GET attestation → 409')
})

t.test('P: attestation answers 409 after a failed selftest too (fls_state 0x02)', async (t) => {
  let stuck = false
  const entropy: EntropySource = {
    read: (n) => (stuck ? new Uint8Array(n).fill(0x55) : new Uint8Array(randomBytes(n))),
  }
  const device = await bootDevice(t, { dataDir: newDir('fls-selftest'), entropy })
  stuck = true
  const selftest = await call(`${device.httpUrl}/api/system/selftest`)
  stuck = false
  t.equal(selftest.json?.fls_state, 0x02, 'the selftest found the entropy source stuck')
  t.equal((await getAttestation(device)).status, 409, 'GET attestation → 409')
})

t.test('E: attestation and provisioning do not exist (404), fresh or personalised', async (t) => {
  const dir = newDir('e')
  const device = await bootDevice(t, { dataDir: `${dir}/e`, variant: 'E' })
  const p = await bootDevice(t, { dataDir: `${dir}/p` })
  const signed = body(await signAttestation(await attestationRequest(t, p), devCa))
  t.equal((await getAttestation(device)).status, 404, 'fresh: GET attestation → 404')
  t.equal((await postProvisioning(device, signed)).status, 404, 'fresh: POST provisioning → 404')
  const init = await personalise(device.httpUrl!, 'E')
  t.equal(init.status, 200, init.text)
  t.equal((await getAttestation(device, init.json.token)).status, 404, 'personalised: GET attestation → 404')
  t.equal(
    (await postProvisioning(device, signed, init.json.token)).status,
    404,
    'personalised: POST provisioning → 404',
  )
})
