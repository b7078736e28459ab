// A device and a broker in place of the real ones for the owner's side of the external authenticator
// (client library, hemctl auth, hemctl login --remote): servers that answer with the contract's shapes
// (ext-auth-contract §1, §3.4) and record every request, and hemctl in this process on a clock of the
// test's (its polls' pauses pass at once) with a Ctrl-C of the test's.
import { randomBytes } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { EXT_JWT_APP_HEADER, pairingDescr, signExtJwt } from '../../protocol/index.js'
import { main } from '../../cli/hemctl/cli.js'
import { type Answer, recordingDevice, type Seen } from './recording-device.js'

export type { Answer, Seen }

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
export const key32 = () => b64(randomBytes(32))

/** The values of one pairing and one approval, as the device, the broker and a phone make them. */
export function extValues() {
  const eid = key32()
  const epk = key32()
  const aid = key32()
  const pid = key32()
  const kid = randomBytes(16).toString('hex')
  const now = Math.floor(Date.now() / 1000)
  const jti = key32()
  const someKey = randomBytes(32)
  return {
    eid,
    epk,
    aid,
    pid,
    kid,
    rid: randomBytes(32).toString('hex'),
    eventid: randomBytes(32).toString('hex'),
    request: signExtJwt({ jti, exp: now + 86400, aud: epk, iss: eid }, someKey),
    reply: signExtJwt({ jti, iss: aid, aud: eid, epk, label: 'Pixel 9 (Android)' }, someKey, EXT_JWT_APP_HEADER),
    code: key32(),
    authreq: signExtJwt({ iss: eid, aud: epk, iat: now, exp: now + 3600, jti, scope: { [pid]: 'Axx' } }, someKey),
    authreply: signExtJwt({ aud: eid, jti, exp: now + 900, iat: now, pid, iss: aid, scope: 'Axx' }, someKey),
    /** How the device lists the pairing key (keymgmt search). */
    descr: b64(pairingDescr(Buffer.from(pid, 'base64'))),
  }
}

export type ExtValues = ReturnType<typeof extValues>

/** The scope of a login's eJWT (POST /api/auth/token): the fake device's token for it is the scope itself. */
function loginScope(request: Seen): string {
  const auth = String(request.body.auth)
  return (JSON.parse(Buffer.from(auth.split('.')[1] ?? '', 'base64url').toString()) as { scope: string }).scope
}

/**
 * A device (`url`) and a broker (`cloud`), each answering `answer` (default: `ok` for the route, 404
 * else), every request of both in `seen` in the order they came. The device's logins succeed with a
 * token that is the scope asked for, so `seen` shows which scope each request was made with.
 */
export async function fakeDeviceAndBroker(
  t: { teardown(fn: () => unknown): void },
  answer: (request: Seen & { to: 'device' | 'broker' }) => Answer | undefined,
) {
  const seen: (Seen & { to: 'device' | 'broker' })[] = []
  const on = (to: 'device' | 'broker') => (request: Seen) => {
    const mine = { ...request, to }
    seen.push(mine)
    if (to === 'device' && request.path === '/api/auth/token')
      return request.method === 'GET'
        ? { status: 200, body: { exp: 2 ** 31, spk: key32(), jti: 'j', eid: 'eid' } }
        : { status: 200, body: { token: loginScope(request) } }
    return answer(mine) ?? { status: 404, body: { error: 'not_found', message: 'no such route here' } }
  }
  const device = await recordingDevice(t, on('device'))
  const broker = await recordingDevice(t, on('broker'))
  /** What was asked other than logins. */
  const asked = () => seen.filter((s) => s.path !== '/api/auth/token')
  return { seen, asked, url: device.url, cloud: broker.url }
}

export interface WaitingRun {
  /** Called at each pause between polls, with the pauses so far. */
  onPause?(pauses: number[], interrupts: EventEmitter): void
  stderrIsTTY?: boolean
  env?: Record<string, string>
}

/** hemctl in this process against `url`, on a clock whose pauses pass at once; `pauses` has their lengths. */
export function hemctlWaiting(url: string, configHome: string) {
  return async (argv: string[], run: WaitingRun = {}) => {
    let stdout = ''
    let stderr = ''
    let ms = 0
    const pauses: number[] = []
    const interrupts = new EventEmitter()
    const io = {
      stdout: { write: (data: string | Uint8Array) => (stdout += String(data)) },
      stderr: { write: (text: string) => (stderr += text) },
      // The fake device checks no passphrase: any will do.
      env: { HEM_PASSPHRASE: 'any', XDG_CONFIG_HOME: configHome, ...run.env },
      askSecret: async () => undefined,
      stdin: (async function* () {})(),
      stderrIsTTY: run.stderrIsTTY ?? false,
      now: () => ms,
      async sleep(pause: number, signal: AbortSignal) {
        pauses.push(pause)
        ms += pause
        run.onPause?.(pauses, interrupts)
        await new Promise((resolve) => setImmediate(resolve))
        if (signal.aborted) throw signal.reason
      },
      interrupts,
    }
    const code = await main([...argv, '--url', url], io)
    return { code, stdout, stderr, pauses, listening: interrupts.listenerCount('SIGINT') }
  }
}
