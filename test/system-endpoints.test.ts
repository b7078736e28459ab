// GET/POST /api/system/checkin on real devices (contract §2.1, §3); the self-test: selftest-answer.test.ts.
import { createPublicKey, verify } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { Device } from '../runtime/types.js'
import { LogType } from '../protocol/journal.js'
import { b64 } from './helpers/base64.js'
import { bootDevice } from './helpers/device.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { passphraseChangeHmac } from '../client/index.js'
import { bearer, keys, personalise } from './helpers/owner.js'
import { until } from './helpers/until.js'

// A directory of this run's own: t.testdir() is shared by every concurrent run of this file.
const root = mkdtempSync(join(tmpdir(), 'hemd-system-endpoints-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0
const newDir = (name: string) => join(root, `${++dirs}-${name}`)

const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex')
const nowSeconds = () => Math.floor(Date.now() / 1000)

function postCheckin(device: Device, body: string, token?: string): Promise<Answer> {
  return call(`${device.httpUrl}/api/system/checkin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : bearer(token)) },
    body,
  })
}

/** `check` = base64url(statement) "." base64url(Ed25519 signature of the statement's ASCII). */
function verifyCheck(check: string, publicKey: Uint8Array): boolean {
  const [statement, signature, ...rest] = check.split('.')
  if (statement === undefined || signature === undefined || rest.length > 0) return false
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI, publicKey]), format: 'der', type: 'spki' })
  return verify(null, Buffer.from(statement, 'ascii'), key, Buffer.from(signature, 'base64url'))
}

t.test('checkin: a challenge signed with the log key; a reply is acknowledged and changes nothing', async (t) => {
  const device = await bootDevice(t, { dataDir: newDir('checkin') })
  const base = device.httpUrl!
  const fresh = await call(`${base}/api/system/checkin`)
  t.equal(fresh.status, 200, 'fresh: no token needed')
  t.ok(verifyCheck(fresh.json.check, device.logPublicKey), 'fresh: signed with the log key')
  t.strictSame((await postCheckin(device, '{"checked":"whatever"}')).json, { status: 'OK' }, 'fresh: acknowledged')

  const init = await personalise(base, 'P')
  t.equal(init.status, 200, init.text)
  const token = init.json.token as string
  // Personalisation formats the disks in the background; let it finish before watching for changes.
  await until('formatting done', async () => (await call(`${base}/api/system/status`)).json.format === 'done', {
    rethrow: true,
  })
  const config = async () => {
    const { nonce: _fresh, ...rest } = (await call(`${base}/api/system/config`, { headers: bearer(token) })).json
    return rest
  }
  const eidSign = Buffer.from((await config()).eid_sign as string, 'base64')
  t.strictSame(new Uint8Array(eidSign), device.logPublicKey, 'eid_sign is the log key')

  const asked = nowSeconds()
  const answer = await call(`${base}/api/system/checkin`)
  t.equal(answer.status, 200)
  t.strictSame(Object.keys(answer.json), ['check'])
  const check = answer.json.check as string
  t.match(check, /^[\w-]+\.[\w-]+$/, 'two base64url parts')
  t.ok(verifyCheck(check, eidSign), 'verifies with config eid_sign')
  t.ok(verifyCheck(check, device.logPublicKey), 'verifies with the device log key')
  const [statement] = check.split('.') as [string]
  const claims = JSON.parse(Buffer.from(statement, 'base64url').toString('utf8'))
  t.match(claims, { devid: device.devid, nonce: String, iat: Number })
  // The cloud's device registry (ext-auth contract §3.2) pins eid_sign and wraps TLS keys for eid.
  const { eid, eid_sign } = await config()
  t.strictSame(
    { eid: claims.eid, eid_sign: claims.eid_sign },
    { eid, eid_sign },
    'the signed statement names eid, eid_sign',
  )
  t.equal(Buffer.from(claims.nonce, 'base64').length, 32, 'a 32-byte nonce')
  t.ok(claims.iat >= asked && claims.iat <= nowSeconds(), 'iat is now')
  const edited = Buffer.from(JSON.stringify({ ...claims, devid: '0000000000000000' })).toString('base64url')
  const tampered = `${edited}.${check.split('.')[1]}`
  t.notOk(verifyCheck(tampered, eidSign), 'an edited statement does not verify')
  const second = (await call(`${base}/api/system/checkin`, { headers: bearer(token) })).json.check as string
  t.not(
    JSON.parse(Buffer.from(second.split('.')[0]!, 'base64url').toString()).nonce,
    claims.nonce,
    'a fresh nonce each time (a token is accepted too)',
  )

  const before = {
    config: await config(),
    journal: (await readJournal(device.dataDir)).records.length,
    status: (await call(`${base}/api/system/status`)).json,
  }
  const reply = await postCheckin(device, JSON.stringify({ checked: check }))
  t.equal(reply.status, 200)
  t.equal(reply.text, '{"status":"OK"}', 'exactly {"status":"OK"}')
  t.equal(
    (await postCheckin(device, JSON.stringify({ checked: 'forged.reply' }), token)).text,
    '{"status":"OK"}',
    'whatever the reply, with a token too',
  )
  t.strictSame(await config(), before.config, 'configuration unchanged (uts included)')
  const added = (await readJournal(device.dataDir)).records.slice(before.journal).map((r) => r.type)
  t.strictSame(
    added.filter((type) => type !== LogType.SEAL),
    [],
    'nothing journaled',
  )
  const status = (await call(`${base}/api/system/status`)).json
  t.match(status, { fls_state: before.status.fls_state, ctx: before.status.ctx }, 'status unchanged')
  t.equal('tts' in status, 'tts' in before.status, 'trusted time unchanged')
})

t.test(
  'checkin nonces are not config nonces: they neither authenticate a passphrase change nor push one out',
  async (t) => {
    const device = await bootDevice(t, { dataDir: newDir('nonces'), variant: 'E' })
    const base = device.httpUrl!
    const init = await personalise(base, 'E')
    t.equal(init.status, 200, init.text)
    const token = init.json.token as string
    const config = (await call(`${base}/api/system/config`, { headers: bearer(token) })).json
    const next = await keys.get('a brand new passphrase', config.eid)
    const change = (nonce: string) =>
      call(`${base}/api/system/config`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(token) },
        body: JSON.stringify({
          userkey: b64(next.publicKey),
          userkey_nonce: nonce,
          userkey_hmac: passphraseChangeHmac(next.seed, config.spk, nonce),
        }),
      })
    const checkNonce = JSON.parse(
      Buffer.from(
        ((await call(`${base}/api/system/checkin`)).json.check as string).split('.')[0]!,
        'base64url',
      ).toString(),
    ).nonce
    const borrowed = await change(checkNonce)
    t.equal(borrowed.status, 406, 'a checkin nonce is refused as userkey_nonce')
    t.equal(borrowed.json?.error, 'stale_nonce')
    // Anyone may ask for check-in challenges, as many as they like: the owner's nonce must outlive them.
    for (let batch = 0; batch < 22; batch++) {
      await Promise.all(Array.from({ length: 50 }, () => call(`${base}/api/system/checkin`)))
    }
    const changed = await change(config.nonce)
    t.equal(changed.status, 200, `the owner's nonce survives 1100 check-in challenges: ${changed.text}`)
    t.equal(changed.json?.updated, true)
  },
)

t.test('checkin POST: 400 for a malformed body, 413 above 7300 bytes', async (t) => {
  const device = await bootDevice(t, { dataDir: newDir('checkin-bodies'), variant: 'E' })
  for (const [body, error] of [
    ['{"checked":', 'malformed_json'],
    ['', 'malformed_json'],
    ['["checked"]', 'body_not_object'],
    ['{}', 'invalid_body'],
    ['{"checked":42}', 'invalid_body'],
    ['{"checked":""}', 'bad_request'],
  ] as const) {
    const answer = await postCheckin(device, body)
    t.equal(answer.status, 400, `${JSON.stringify(body)} → 400`)
    t.equal(answer.json?.error, error, `${JSON.stringify(body)}: ${error}`)
  }
  const exactly = `{"checked":"x"${' '.repeat(7300 - 15)}}`
  t.equal(Buffer.byteLength(exactly), 7300)
  t.equal((await postCheckin(device, exactly)).status, 200, '7300 bytes are accepted')

  const port = Number(new URL(device.httpUrl!).port)
  const oneTooMany = `{"checked":"x"${' '.repeat(7300 - 14)}}`
  t.equal(Buffer.byteLength(oneTooMany), 7301)
  const overLimit = await rawPost(port, '/api/system/checkin', oneTooMany)
  t.match(overLimit.head, /^HTTP\/1\.1 413 /, '> 7300 bytes → 413')
  t.equal(JSON.parse(overLimit.body).error, 'payload_too_large')
})

/** One POST on a raw socket, so a server that answers before reading the whole body is still heard. */
function rawPost(port: number, path: string, body: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let data = Buffer.alloc(0)
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no complete answer within 10 s: ${JSON.stringify(data.toString())}`))
    }, 10_000)
    const done = () => {
      const end = data.indexOf('\r\n\r\n')
      if (end === -1) return false
      const head = data.subarray(0, end).toString()
      const length = Number(/\r\nContent-Length: (\d+)/i.exec(head)?.[1] ?? 0)
      if (data.length < end + 4 + length) return false
      clearTimeout(timer)
      socket.destroy()
      resolve({ head, body: data.subarray(end + 4, end + 4 + length).toString() })
      return true
    }
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk])
      done()
    })
    socket.on('close', () => {
      if (!done()) {
        clearTimeout(timer)
        reject(new Error(`connection closed: ${JSON.stringify(data.toString())}`))
      }
    })
    socket.on('error', () => undefined)
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: hem.local\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    )
    socket.write(body)
  })
}
