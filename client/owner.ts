import { buildEjwt, buildLoginEjwt } from './ejwt-builder.js'
import { deviceRequest, type DeviceHttpOptions } from './device-http.js'
import { derivePassphraseKeyAsync } from './passphrase-key.js'

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

export class DeviceRefusedError extends Error {
  override readonly name = 'DeviceRefusedError'
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what}: the device answered ${status}${describe(body)}`)
  }
}

function describe(body: unknown): string {
  const message = (body as { message?: unknown } | undefined)?.message
  return typeof message === 'string' ? ` (${message})` : ''
}

/**
 * Personalises a fresh device: the master passphrase signs the `cfg` (which carries both
 * public keys), and the device answers with a `system:config` token for the user.
 */
export async function personaliseDevice(
  base: string,
  passphrases: { user: string; master: string },
  cfg: Record<string, unknown>,
  o: DeviceHttpOptions = {},
): Promise<{ instanceid: string; token: string; csr?: string; genuine?: string }> {
  const challenge = await deviceRequest(`${base}/api/auth/init`, 'GET', undefined, o)
  if (challenge.status !== 200) throw new DeviceRefusedError(challenge.status, challenge.body, 'GET /api/auth/init')
  const { eid, spk, jti, exp } = challenge.body as { eid: string; spk: string; jti: string; exp: number }
  const [user, master] = await Promise.all([derivePassphraseKeyAsync(passphrases.user, eid), derivePassphraseKeyAsync(passphrases.master, eid)])
  const init = buildEjwt({
    seed: master.seed,
    spk,
    claims: {
      jti,
      aud: spk,
      exp,
      iat: Math.floor(Date.now() / 1000),
      iss: b64(master.publicKey),
      cfg: { ...cfg, masterkey: b64(master.publicKey), userkey: b64(user.publicKey) },
    },
  })
  const answer = await deviceRequest(`${base}/api/auth/init`, 'POST', { init }, o)
  if (answer.status !== 200) throw new DeviceRefusedError(answer.status, answer.body, 'POST /api/auth/init')
  return answer.body
}

/** Logs in with a passphrase (the user's or the master's) and returns a bearer token for one scope. */
export async function loginToDevice(base: string, passphrase: string, scope: string, lifetimeSeconds: number, o: DeviceHttpOptions = {}): Promise<string> {
  const challenge = await deviceRequest(`${base}/api/auth/token`, 'GET', undefined, o)
  if (challenge.status !== 200) throw new DeviceRefusedError(challenge.status, challenge.body, 'GET /api/auth/token')
  const { eid, spk, jti } = challenge.body as { eid: string; spk: string; jti: string }
  const key = await derivePassphraseKeyAsync(passphrase, eid)
  const auth = buildLoginEjwt(key, { spk, jti }, scope, lifetimeSeconds)
  const answer = await deviceRequest(`${base}/api/auth/token`, 'POST', { auth }, o)
  if (answer.status !== 200) throw new DeviceRefusedError(answer.status, answer.body, 'POST /api/auth/token')
  return (answer.body as { token: string }).token
}
