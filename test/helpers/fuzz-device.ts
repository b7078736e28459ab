// A personalised device for the fuzz tests: its listeners, a valid token for every route, the
// keys the key and cipher routes name, the errors it logs, and the checks every run ends with.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import tls from 'node:tls'
import fc from 'fast-check'
import { pino, type Logger } from 'pino'
import type { Test } from 'tap'
import type { Device } from '../../runtime/types.js'
import { scopeSatisfies } from '../../protocol/scopes.js'
import { routeTable } from '../../gateway/routes.js'
import type { Route } from '../../gateway/types.js'
import { verifyDataDir } from './journal.js'
import { api, createKey } from './keys.js'
import { login, MASTER_PASS, owned, USER_PASS, type Owned } from './owner.js'
import { skippingClock } from './clock.js'
import { bootDevice } from './device.js'
import type { Clock } from '../../hal/index.js'
import { answerProblems, rawExchange, requestHead, type RawOutcome, type Target } from './raw-http.js'

export const routeKey = (route: Route) => `${route.method} ${route.path}`

/** Routes whose success ends the run (every token dies, or the device stops): sent only with tokens they refuse. */
export const DISRUPTIVE = new Set(['GET /api/system/reboot', 'GET /api/system/shutdown'])

export interface FuzzDevice {
  variant: 'P' | 'E'
  owner: Owned
  http: Target
  https: Target
  /** The routes of this variant. */
  routes: Route[]
  /** Valid user tokens by scope. */
  tokens: Map<string, string>
  /** The master's `system:config` token. */
  master: string
  /** A user token that has expired. */
  expired: string
  /** Keys the key and crypto routes name, one of each kind they serve, and one that may be deleted. */
  kids: FuzzKids
  /** The device's TLS certificate (DER): a real certificate to mutate. */
  certDer: Buffer
  /** Every line the device logged at level error or above (a 500, a failed command). */
  errors: string[]
}

/** A fuzz device's keys by use; `spare` (AES-128) may be deleted, the others each have a use token. */
export interface FuzzKids {
  aes: string
  x25519: string
  /** SECP256R1 with both flags: ECDSA and ECDH. */
  p256: string
  ed25519: string
  ed448: string
  /** SHA2-256: HMAC. */
  hmac: string
  mlkem: string
  mldsa: string
  spare: string
}

/** What each key is created as. */
const KEY_TYPES: Record<keyof FuzzKids, Record<string, unknown>> = {
  aes: { type: 'AES256' },
  x25519: { type: 'CURVE25519', descr: Buffer.from('fuzz descr').toString('base64') },
  p256: { type: 'SECP256R1', mode: 'ECDH,ExDSA' },
  ed25519: { type: 'ED25519', mode: 'ExDSA' },
  ed448: { type: 'ED448' },
  hmac: { type: 'SHA2-256' },
  mlkem: { type: 'MLKEM768' },
  // The largest: its verify body (~6.7 KB) is the API's largest, near the 7300-byte limit.
  mldsa: { type: 'MLDSA87' },
  spare: { type: 'AES128' },
}

export interface FuzzDeviceOptions {
  /**
   * User tokens to log in for (each login takes the brake's 500 ms); `system:config` comes free with personalisation.
   */
  scopes: string[]
  /** Create the keys (needs `keymgmt:gen` in `scopes`) and log in for `keymgmt:use:` each but the spare. */
  keys?: boolean
}

/** A data dir of this run's own, removed when the test ends. */
export function tempDataDir(t: Test, variant: 'P' | 'E'): string {
  const dataDir = mkdtempSync(join(tmpdir(), `hemd-fuzz-${variant}-`))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  return dataDir
}

/** A device logger that keeps every line at level error or above. */
export function errorLog(): { logger: Logger; errors: string[] } {
  const errors: string[] = []
  return { logger: pino({ level: 'error' }, { write: (line: string) => void errors.push(line.trim()) }), errors }
}

export interface Fresh {
  device: Device
  base: string
  http: Target
  https: Target
  errors: string[]
}

/** A fresh device (no owner, so no token needed), on the clock given or bootDevice's. */
export async function freshDevice(t: Test, variant: 'P' | 'E', clock?: Clock): Promise<Fresh> {
  const { logger, errors } = errorLog()
  const dataDir = tempDataDir(t, variant)
  const device = await bootDevice(t, { variant, dataDir, logger, ...(clock ? { clock } : {}) })
  const port = (url: string) => Number(new URL(url).port)
  const [http, https] = [device.httpUrl!, device.httpsUrl!]
  return { device, base: http, http: { port: port(http), tls: false }, https: { port: port(https), tls: true }, errors }
}

/** A personalised device with tokens. */
export async function fuzzDevice(t: Test, variant: 'P' | 'E', options: FuzzDeviceOptions): Promise<FuzzDevice> {
  const { logger, errors } = errorLog()
  const clock = skippingClock()
  const owner = await owned(t, { variant, dataDir: tempDataDir(t, variant), boot: { logger, clock } })
  const port = (url: string) => Number(new URL(url).port)
  const tokens = new Map<string, string>([['system:config', owner.token]])
  // Half a minute: enough for a loaded host to deliver the login (its eJWT carries the same expiry), and
  // short enough that the device's clock, moved past it below, stays within the 60 s it allows the
  // `iat` of a later login made on the host's clock.
  const expiry = Math.floor(clock.now() / 1000) + 30
  const expired = await login(owner.base, 'logger:get', USER_PASS, expiry)
  for (const scope of options.scopes) tokens.set(scope, await login(owner.base, scope))
  const master = await login(owner.base, 'system:config', MASTER_PASS)
  const names = Object.keys(KEY_TYPES) as (keyof FuzzKids)[]
  // KIDs that name no key (0000…, 1111…), unless the keys are made.
  const kids = Object.fromEntries(names.map((name, i) => [name, i.toString(16).repeat(32)])) as unknown as FuzzKids
  if (options.keys) {
    const gen = tokens.get('keymgmt:gen')!
    for (const name of names)
      kids[name] = await createKey(owner.https, gen, { label: `fuzz-${name}`, ...KEY_TYPES[name] })
    for (const name of names.filter((n) => n !== 'spare'))
      tokens.set(`keymgmt:use:${kids[name]}`, await login(owner.base, `keymgmt:use:${kids[name]}`))
  }
  // The device's clock moved past the token's expiry, rather than waiting for it.
  clock.advance(Math.max(0, expiry * 1000 + 1000 - clock.now()))
  return {
    variant,
    owner,
    http: { port: port(owner.base), tls: false },
    https: { port: port(owner.https), tls: true },
    routes: routeTable.filter((route) => route.variants.includes(variant)),
    tokens,
    master,
    expired,
    kids,
    certDer: await peerCertificate(port(owner.https)),
    errors,
  }
}

function peerCertificate(port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().raw)
      socket.destroy()
    })
    socket.on('error', reject)
  })
}

/** A user token the route accepts (`kid` fills a `<kid>` scope), or undefined when it needs none. */
export function rightToken(fd: FuzzDevice, route: Route, kid = fd.kids.aes): string | undefined {
  if (!route.scopes) return route.auth === 'open' ? undefined : fd.owner.token
  for (const [scope, token] of fd.tokens)
    if (route.scopes.some((required) => scopeSatisfies(scope, required, { kid }))) return token
  return undefined
}

/** A valid user token the route refuses (403). */
export function wrongToken(fd: FuzzDevice, route: Route): string {
  const refused = [...fd.tokens].find(
    ([scope]) => !route.scopes?.some((required) => scopeSatisfies(scope, required, {})),
  )
  return refused?.[1] ?? fd.expired
}

/** What is wrong with the outcome of one well-formed request: no answer, or a bad one. */
export function outcomeProblems(outcome: RawOutcome, head = false): string[] {
  const [first] = outcome.responses
  if (!first)
    return [
      outcome.timedOut
        ? 'no answer in time'
        : `the connection closed without an answer${outcome.error ? ` (${outcome.error})` : ''}`,
    ]
  return answerProblems(first, head)
}

/**
 * `GET /api/system/status` on a new connection: the device must answer 200 after every run, and
 * no input may put it in a fail state (a stack overflow in a command, say, raises fls_state).
 */
export async function statusProblems({ http }: { http: Target }): Promise<string[]> {
  const outcome = await rawExchange(http, { steps: [requestHead('GET', '/api/system/status', [])] })
  const [answer] = outcome.responses
  if (answer?.status !== 200)
    return [
      `status answered ${answer?.status ?? (outcome.timedOut ? 'nothing in time' : 'with a close')} after the run`,
    ]
  const { fls_state } = JSON.parse(answer.body.toString()) as { fls_state: number }
  return fls_state === 0 ? [] : [`the device is in a fail state after the run: fls_state ${fls_state}`]
}

/** Throws the problems with what was sent, so that fast-check reports them with its counterexample. */
export function assertNone(problems: string[], sent: Buffer | string): void {
  if (problems.length === 0) return
  const text = Buffer.isBuffer(sent) ? sent.toString('latin1') : sent
  throw new Error(`${problems.join('; ')}\n--- sent (${text.length} bytes) ---\n${text.slice(0, 1500)}`)
}

/**
 * Runs a property with a fixed seed, so that every run of the suite sends the same requests;
 * `examples` (the inputs of bugs found before) run first, every time.
 */
export function check<Ts extends [unknown, ...unknown[]]>(
  property: fc.IAsyncProperty<Ts>,
  seed: number,
  numRuns: number,
  examples: Ts[] = [],
): Promise<void> {
  return fc.assert(property, { seed, numRuns, examples, endOnFailure: true })
}

/**
 * The end of every fuzz test: the device still answers, no run reset or rebooted it, and then
 * `stopAndVerify`.
 */
export async function finish(t: Test, fd: FuzzDevice): Promise<void> {
  t.same(await statusProblems(fd), [], 'the device still answers status')
  const stillConfigured = await api(`${fd.owner.base}/api/system/config`, fd.owner.token)
  t.equal(stillConfigured.status, 200, 'the owner token still works: no run reset or rebooted the device')
  await stopAndVerify(t, fd.owner.device, fd.errors)
}

/**
 * Stops the device; it logged no error, and its journal (every record the runs wrote, the refusals included) verifies.
 */
export async function stopAndVerify(t: Test, device: Device, errors: string[]): Promise<void> {
  await device.stop()
  const verdict = await verifyDataDir(device.dataDir, device.logPublicKey)
  t.equal(verdict.ok, true, 'the journal verifies', { problems: verdict.problems.slice(0, 5) })
  t.same(errors, [], 'the device logged no error')
}
