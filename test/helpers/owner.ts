import { mkdirSync } from 'node:fs'
import type { Test } from 'tap'
import type { Device, DeviceOptions } from '../../runtime/types.js'
import { HemClient, buildInitEjwt, buildLoginEjwt, type PassphraseKey } from '../../client/index.js'
import { PassphraseKeyCache } from './passphrase-key-cache.js'
import { b64 } from './base64.js'
import { bootDevice } from './device.js'
import { call, type Answer } from './http.js'
import { RUN_SEEDS, SHARED_IDENTITY_DIR } from './shared-identity.js'
import { until } from './until.js'

export const USER_PASS = 'correct horse battery staple'
export const MASTER_PASS = 'master of puppets 1986'

mkdirSync(SHARED_IDENTITY_DIR, { recursive: true })
/** Seeds derived once per (passphrase, eid) in a run: the run's devices mostly share one eid (bootDevice). */
export const keys = new PassphraseKeyCache({ file: RUN_SEEDS })

/** The client library as an owner's program uses it, with this process's seeds (self-signed TLS accepted). */
export function ownerClient(url: string, passphrase = USER_PASS): HemClient {
  return new HemClient({ url, passphrase, insecure: true, deriveKey: (secret, eid) => keys.get(secret, eid) })
}

export function defaultCfg(variant: 'P' | 'E', user: PassphraseKey, master: PassphraseKey): Record<string, unknown> {
  return {
    user: 'Ada',
    masterkey: b64(master.publicKey),
    userkey: b64(user.publicKey),
    hostname: 'hem.example',
    origin: 'https://app.example',
    trusted_ts: true,
    trusted_backend: false,
    allow_keysearch: false,
    email: 'ada@example.com',
    ...(variant === 'P' ? { ip: '192.168.7.1/24', storage_mode: 0x51, storage_disk0size: 131072, dnsd: false } : {}),
  }
}

/** Personalises a fresh device over its API, as its owner would; returns the init answer. */
export async function personalise(
  base: string,
  variant: 'P' | 'E',
  cfgPatch: Record<string, unknown> = {},
): Promise<Answer & { user: PassphraseKey; master: PassphraseKey }> {
  const challenge = (await call(`${base}/api/auth/init`)).json
  const user = await keys.get(USER_PASS, challenge.eid)
  const master = await keys.get(MASTER_PASS, challenge.eid)
  const cfg = { ...defaultCfg(variant, user, master), ...cfgPatch }
  const init = buildInitEjwt(master, challenge, cfg, Math.floor(Date.now() / 1000))
  const answer = await call(`${base}/api/auth/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ init }),
  })
  return { ...answer, user, master }
}

export interface Owned {
  device: Device
  variant: 'P' | 'E'
  /** The HTTP and HTTPS base URLs. */
  base: string
  https: string
  /** The owner's init token (U, system:config); tests may replace it with a fresh login. */
  token: string
  user: PassphraseKey
  master: PassphraseKey
  instanceid: string
}

export interface OwnedOptions {
  /** Default E, the fast one. */
  variant?: 'P' | 'E'
  /** Default `t.testdir()` (which empties the test's directory: one call per test). */
  dataDir?: string
  /** Changes to the personalisation `cfg` (see `defaultCfg`). */
  cfg?: Record<string, unknown>
  /** More device options (a clock, ...). */
  boot?: Partial<DeviceOptions>
}

/**
 * A booted device personalised by its owner (on P, with its disks formatted) and the owner's init
 * token; throws when personalisation is refused. While P formats, its status must keep answering.
 */
export async function owned(t: Test, options: OwnedOptions = {}): Promise<Owned> {
  const { variant = 'E', cfg = {}, boot = {} } = options
  const device = await bootDevice(t, { ...boot, dataDir: options.dataDir ?? t.testdir(), variant })
  const base = device.httpUrl!
  const init = await personalise(base, variant, cfg)
  if (init.status !== 200) throw new Error(`personalisation refused: ${init.status} ${init.text}`)
  if (variant === 'P')
    await until('formatting done', async () => (await call(`${base}/api/system/status`)).json.format === 'done', {
      rethrow: true,
    })
  return {
    device,
    variant,
    base,
    https: device.httpsUrl!,
    token: init.json.token as string,
    user: init.user,
    master: init.master,
    instanceid: init.json.instanceid as string,
  }
}

/** Logs in with a passphrase for one scope; returns the bearer token (throws on refusal). */
export async function login(base: string, scope: string, passphrase = USER_PASS, exp?: number): Promise<string> {
  const answer = await loginAnswer(base, scope, passphrase, exp)
  if (answer.status !== 200) throw new Error(`login refused: ${answer.status} ${answer.text}`)
  return answer.json.token as string
}

export async function loginAnswer(base: string, scope: string, passphrase = USER_PASS, exp?: number): Promise<Answer> {
  const challenge = (await call(`${base}/api/auth/token`)).json
  const key = await keys.get(passphrase, challenge.eid)
  const auth = buildLoginEjwt(key, challenge, scope, exp === undefined ? 3600 : exp - Math.floor(Date.now() / 1000))
  return call(`${base}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth }),
  })
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` }
}
