// The whole device API for a program: typed calls, typed errors, and logins it makes itself.
import * as body from './crypto-input.js'
import { buildInitEjwt, buildLoginEjwt } from './ejwt-builder.js'
import { refusal, UnexpectedAnswerError } from './errors.js'
import { derivePassphraseKeyAsync, type PassphraseKey } from './passphrase-key.js'
import { Transport, type Exchange, type RequestInput, type TransportOptions } from './transport.js'
import type * as T from './types.js'

export interface HemClientOptions extends TransportOptions {
  url: string
  /**
   * The passphrase logins use (the user's, or the master's
   * with `role: 'M'`); asked for only when a login is needed.
   */
  passphrase?: string | (() => Promise<string>)
  /** Token lifetime asked for at login, in seconds (default 3600; the device caps it). */
  tokenLifetime?: number
  /** How a passphrase becomes its key (PBKDF2, 600000 iterations): replaceable for a test's cache. */
  deriveKey?(passphrase: string, eid: string): Promise<PassphraseKey>
  /** Unix seconds, for token expiry (default the system clock). */
  now?(): number
}

interface CachedToken {
  token: string
  exp: number
}

const LOG_FILE_ID = /^[0-9a-f]{8}$/
/** More than any device keeps: a list claiming more is not believed. */
const MAX_LOG_FILES = 1 << 20

/** Renew a token this long before the device would refuse it. */
const RENEW_MARGIN_S = 30

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

/**
 * A client of one device. Each call logs in for the scope it needs (once: tokens are cached per
 * scope, renewed before they expire and once more when the device answers 401, as after a
 * reboot). The passphrase's key is derived once per device identity (`eid`).
 */
export class HemClient {
  readonly transport: Transport
  private readonly tokens = new Map<string, Promise<CachedToken>>()
  private readonly keys = new Map<string, Promise<PassphraseKey>>()
  private passphrase: Promise<string> | undefined

  constructor(private readonly o: HemClientOptions) {
    this.transport = new Transport(o.url, o)
  }

  private now(): number {
    return this.o.now?.() ?? Math.floor(Date.now() / 1000)
  }

  // ---- the exchange ----

  /** One request; a status other than `ok` throws the error class of that status. */
  async call(method: string, path: string, input: RequestInput = {}, ok: readonly number[] = [200]): Promise<Exchange> {
    const answer = await this.transport.request(method, path, input)
    if (!ok.includes(answer.status)) throw refusal(answer.status, parse(answer.bytes), `${method} ${path}`)
    return answer
  }

  async json<R>(method: string, path: string, input: RequestInput = {}): Promise<R> {
    return parse((await this.call(method, path, input)).bytes) as R
  }

  /** A request with a token for `scope`; a 401 (the token died with a reboot) logs in once more. */
  async authorized(
    scope: string,
    method: string,
    path: string,
    input: RequestInput = {},
    ok: readonly number[] = [200],
  ): Promise<Exchange> {
    const first = await this.transport.request(method, path, { ...input, token: await this.token(scope) })
    const answer =
      first.status === 401
        ? await this.transport.request(method, path, { ...input, token: await this.token(scope, true) })
        : first
    if (!ok.includes(answer.status)) throw refusal(answer.status, parse(answer.bytes), `${method} ${path}`)
    return answer
  }

  /** As `authorized`, but without a token while the device is fresh: some routes are open until it has an owner. */
  private async openWhileFresh(
    scope: string,
    method: string,
    path: string,
    input: RequestInput = {},
    ok: readonly number[] = [200],
  ): Promise<Exchange> {
    if ((await this.status()).inited !== false) return this.authorized(scope, method, path, input, ok)
    return this.call(method, path, input, ok)
  }

  private async authorizedJson<R>(scope: string, method: string, path: string, input: RequestInput = {}): Promise<R> {
    return parse((await this.authorized(scope, method, path, input)).bytes) as R
  }

  // ---- identity and access ----

  /** A bearer token for `scope`, from the cache unless it is about to expire or `renew` is asked. */
  async token(scope: string, renew = false): Promise<string> {
    const cached = this.tokens.get(scope)
    if (cached && !renew) {
      const held = await cached.catch(() => undefined)
      if (held && held.exp - RENEW_MARGIN_S > this.now()) return held.token
    }
    const fresh = this.login(scope)
    this.tokens.set(scope, fresh)
    fresh.catch(() => this.tokens.delete(scope))
    return (await fresh).token
  }

  /** Forgets every token (they die at the device's next reboot anyway). */
  forgetTokens(): void {
    this.tokens.clear()
  }

  private async login(scope: string): Promise<CachedToken> {
    // A login that cannot happen fails before it asks anything of the device.
    await this.secret()
    const challenge = await this.json<T.TokenChallenge>('GET', '/api/auth/token')
    const key = await this.keyFor(challenge.eid)
    const lifetime = this.o.tokenLifetime ?? 3600
    const auth = buildLoginEjwt(key, challenge, scope, lifetime)
    const { token } = await this.json<{ token: string }>('POST', '/api/auth/token', { json: { auth } })
    return { token, exp: tokenExpiry(token) ?? this.now() + lifetime }
  }

  private keyFor(eid: string): Promise<PassphraseKey> {
    let key = this.keys.get(eid)
    if (!key) {
      key = this.secret().then((passphrase) => (this.o.deriveKey ?? derivePassphraseKeyAsync)(passphrase, eid))
      this.keys.set(eid, key)
      key.catch(() => this.keys.delete(eid))
    }
    return key
  }

  private secret(): Promise<string> {
    const source = this.o.passphrase
    if (source === undefined)
      return Promise.reject(new Error('this request needs a login, and the client was given no passphrase'))
    this.passphrase ??= typeof source === 'string' ? Promise.resolve(source) : source()
    this.passphrase.catch(() => (this.passphrase = undefined))
    return this.passphrase
  }

  /**
   * Makes a fresh device its owner's: the master passphrase signs `cfg`, which carries both
   * passphrases' public keys. Answers the init token (the user's, `system:config`). Without
   * `cfg.origin` the device is told to admit the origin of the URL this client talks to, its own:
   * never `*`, which lets every page its owner visits call the routes that need no token.
   */
  async personalise(
    passphrases: { user: string; master: string },
    cfg: Record<string, unknown>,
  ): Promise<T.Personalised> {
    const challenge = await this.json<T.InitChallenge>('GET', '/api/auth/init')
    const derive = this.o.deriveKey ?? derivePassphraseKeyAsync
    const [user, master] = await Promise.all([
      derive(passphrases.user, challenge.eid),
      derive(passphrases.master, challenge.eid),
    ])
    const signed = {
      origin: this.transport.origin,
      ...cfg,
      masterkey: b64(master.publicKey),
      userkey: b64(user.publicKey),
    }
    const init = buildInitEjwt(master, challenge, signed, this.now())
    return this.json('POST', '/api/auth/init', { json: { init } })
  }

  // ---- system ----

  status(): Promise<T.Status> {
    return this.json('GET', '/api/system/status')
  }

  version(): Promise<T.Version> {
    return this.json('GET', '/api/system/version')
  }

  openapi(): Promise<Record<string, unknown>> {
    return this.json('GET', '/api/openapi.json')
  }

  config(): Promise<T.Config> {
    return this.authorizedJson('system:config', 'GET', '/api/system/config')
  }

  /** Changes configuration fields; `reboot_required` says whether they apply only after a reboot. */
  setConfig(changes: Record<string, unknown>): Promise<T.ConfigUpdated> {
    return this.authorizedJson('system:config', 'POST', '/api/system/config', { json: changes })
  }

  /** Factory reset: keys, disks and configuration are erased, the device reboots fresh. */
  wipeout(): Promise<T.ConfigUpdated> {
    return this.setConfig({ wipeout: true })
  }

  attestation(): Promise<T.Attestation> {
    return this.json('GET', '/api/system/config/attestation')
  }

  /** As the owner, once personalised (attestation needs any valid token then). */
  ownedAttestation(): Promise<T.Attestation> {
    return this.authorizedJson('system:config', 'GET', '/api/system/config/attestation')
  }

  async provision(body: Record<string, unknown>): Promise<void> {
    await this.call('POST', '/api/system/config/provisioning', { json: body })
  }

  /** Runs every self-test; a failure shows in `fls_state`. Fresh devices need no token. */
  async selftest(): Promise<T.Selftest> {
    return parse((await this.openWhileFresh('system:config', 'GET', '/api/system/selftest')).bytes) as T.Selftest
  }

  async reboot(): Promise<void> {
    await this.authorized('system:config', 'GET', '/api/system/reboot')
    this.forgetTokens()
  }

  async shutdown(): Promise<void> {
    await this.authorized('system:config', 'GET', '/api/system/shutdown')
  }

  // ---- keys ----

  /** Any of the 23 types; `mode` matters only for the SECP curves. */
  async createKey(input: T.KeySpec): Promise<{ kid: string }> {
    return this.authorizedJson('keymgmt:gen', 'POST', '/api/keymgmt/create', { json: body.keySpecBody(input) })
  }

  /** A public key of any asymmetric type: raw, SEC1 (compressed or not) for the SECP curves. */
  async importKey(input: T.KeySpec & { pubkey: Uint8Array }): Promise<{ kid: string }> {
    return this.authorizedJson('keymgmt:imp', 'POST', '/api/keymgmt/import', {
      json: { ...body.keySpecBody(input), pubkey: b64(input.pubkey) },
    })
  }

  /**
   * A new key made in the device from an ECDH of `kid` with the peer (scope `keymgmt:derive`);
   * the same derive twice makes the same key, which the device refuses (406) while it exists.
   */
  async deriveKey(input: T.DeriveInput): Promise<{ kid: string }> {
    return this.authorizedJson('keymgmt:derive', 'POST', '/api/keymgmt/derive', { json: body.deriveBody(input) })
  }

  /** One page (at most 15 keys) from `offset`. */
  listKeys(offset = 0, count = 15): Promise<T.KeyList> {
    return this.authorizedJson('keymgmt:list', 'GET', `/api/keymgmt/list/${offset}/${count}`)
  }

  /** Every key, page after page. */
  async allKeys(): Promise<T.KeyEntry[]> {
    const keys: T.KeyEntry[] = []
    let page: T.KeyList
    do {
      page = await this.listKeys(keys.length)
      keys.push(...page.list)
    } while (page.list.length > 0 && keys.length < page.total)
    return keys
  }

  /** With `use`, asked with the key's own scope `keymgmt:use:<kid>` (a program that holds only that one). */
  getKey(kid: string, o: { use?: boolean } = {}): Promise<T.KeyDetails> {
    const path = `/api/keymgmt/get/${kidPath(kid)}`
    return this.authorizedJson(o.use ? `keymgmt:use:${kid}` : 'keymgmt:get', 'GET', path)
  }

  async deleteKey(kid: string): Promise<void> {
    await this.authorized('keymgmt:del', 'DELETE', `/api/keymgmt/delete/${kidPath(kid)}`)
  }

  /** Sets the label and the description: without `descr` the key's description is cleared (crypto-contract §2). */
  async updateKey(kid: string, label: string, descr?: Uint8Array): Promise<void> {
    await this.authorized('keymgmt:upd', 'POST', '/api/keymgmt/update', {
      json: { kid, label, ...(descr ? { descr: b64(descr) } : {}) },
    })
  }

  /** Keys whose `descr` bytes match: `^` + base64 for a prefix, base64 + `$` for a suffix, else a substring. */
  searchKeys(descr: string, offset?: number, limit?: number): Promise<T.KeyList> {
    const body = { descr, ...(offset !== undefined ? { offset } : {}), ...(limit !== undefined ? { limit } : {}) }
    return this.authorizedJson('keymgmt:search', 'POST', '/api/keymgmt/search', { json: body })
  }

  // ---- ciphers ----

  async encrypt(input: T.EncryptInput): Promise<T.Encrypted> {
    const answer = await this.useKeyJson(input.kid, 'cipher/encrypt', cipherBody(input), ['ciphertext'])
    const { iv, tag } = answer as { iv?: string; tag?: string }
    return {
      ciphertext: decoded(answer.ciphertext),
      ...(iv ? { iv: decoded(iv) } : {}),
      ...(tag ? { tag: decoded(tag) } : {}),
    }
  }

  async decrypt(input: T.DecryptInput): Promise<Uint8Array> {
    const json = {
      ...cipherBody(input),
      ...(input.iv ? { iv: b64(input.iv) } : {}),
      ...(input.tag ? { tag: b64(input.tag) } : {}),
    }
    return this.useKey(input.kid, 'cipher/decrypt', json, 'plaintext')
  }

  // ---- signatures, MACs, agreement, key wrap, post-quantum (scope keymgmt:use:<kid>) ----

  /** ECDSA (DER) or EdDSA (raw) signature of `msg`. */
  async sign(input: T.SignInput): Promise<Uint8Array> {
    return this.useKey(input.kid, 'exdsa/sign', body.signBody(input), 'sign')
  }

  /** Whether the signature verifies (a device's 406 is false; named so beside the upgrade check's `verify`). */
  async verifySignature(input: T.VerifyInput): Promise<boolean> {
    return this.verdict(input.kid, 'exdsa/verify', body.verifyBody(input))
  }

  async hmac(input: T.HmacInput): Promise<Uint8Array> {
    return this.useKey(input.kid, 'hmac/hash', body.hmacBody(input), 'mac')
  }

  /** Whether `mac` is the message's (compared in the device, in constant time). */
  async hmacVerify(input: T.HmacVerifyInput): Promise<boolean> {
    return this.verdict(input.kid, 'hmac/verify', body.hmacVerifyBody(input))
  }

  /** The shared secret with the peer: its first 32 bytes, or with `alg` that digest of all of it. */
  async ecdh(input: T.EcdhInput): Promise<Uint8Array> {
    return this.useKey(input.kid, 'ecdh', body.ecdhBody(input), 'ecdh')
  }

  /** RFC 3394 key wrap: 8 bytes longer than `msg`. */
  async wrap(input: T.WrapInput): Promise<Uint8Array> {
    return this.useKey(input.kid, 'cipher/wrap', body.wrapBody(input, 'wrap'), 'wrapped')
  }

  /** The wrapped key, once its integrity check passes (else NotAcceptableError). */
  async unwrap(input: T.WrapInput): Promise<Uint8Array> {
    return this.useKey(input.kid, 'cipher/unwrap', body.wrapBody(input, 'unwrap'), 'unwrapped')
  }

  /** A fresh shared secret and its ciphertext for the holder of an ML-KEM key (or of its private part). */
  async mlKemEncapsulate(kid: string): Promise<T.Encapsulated> {
    const json = { kid: body.checkKid(kid) }
    const answer = await this.useKeyJson(kid, 'pqc/mlkem/encaps', json, ['alg', 'ss', 'ct'])
    return { alg: answer.alg, sharedSecret: decoded(answer.ss), ciphertext: decoded(answer.ct) }
  }

  async mlKemDecapsulate(kid: string, ciphertext: Uint8Array): Promise<T.Decapsulated> {
    const answer = await this.useKeyJson(kid, 'pqc/mlkem/decaps', body.decapsBody(kid, ciphertext), ['alg', 'ss'])
    return { alg: answer.alg, sharedSecret: decoded(answer.ss) }
  }

  async mlDsaSign(input: T.MlDsaSignInput): Promise<T.MlDsaSigned> {
    const answer = await this.useKeyJson(input.kid, 'pqc/mldsa/sign', body.mlDsaSignBody(input), ['alg', 'sign'])
    return { alg: answer.alg, signature: decoded(answer.sign) }
  }

  async mlDsaVerify(input: T.MlDsaVerifyInput): Promise<boolean> {
    return this.verdict(input.kid, 'pqc/mldsa/verify', body.mlDsaVerifyBody(input))
  }

  /** A crypto route's answer fields, each a string, with the token of the key's scope. */
  private async useKeyJson<F extends string>(
    kid: string,
    route: string,
    json: Record<string, string>,
    fields: readonly F[],
  ): Promise<Record<F, string>> {
    const answer = parse((await this.authorized(`keymgmt:use:${kid}`, 'POST', `/api/crypto/${route}`, { json })).bytes)
    const missing = fields.find((f) => typeof (answer as Record<string, unknown> | undefined)?.[f] !== 'string')
    if (missing !== undefined)
      throw new UnexpectedAnswerError(`POST /api/crypto/${route}: the answer has no ${missing} string`)
    return answer as Record<F, string>
  }

  private async useKey(kid: string, route: string, json: Record<string, string>, field: string): Promise<Uint8Array> {
    return decoded((await this.useKeyJson(kid, route, json, [field]))[field]!)
  }

  /** A verify route: 200 (empty) is true, 406 false, anything else throws. */
  private async verdict(kid: string, route: string, json: Record<string, string>): Promise<boolean> {
    const answer = await this.authorized(`keymgmt:use:${kid}`, 'POST', `/api/crypto/${route}`, { json }, [200, 406])
    return answer.status === 200
  }

  // ---- disks (P) ----

  async unlockDisk(disk: 0 | 1, mode: 'ro' | 'rw' = 'ro'): Promise<void> {
    await this.authorized(diskScope(disk, mode), 'GET', `/api/storage/unlock/${mode}`)
  }

  async lockDisk(disk: 0 | 1): Promise<void> {
    await this.authorized(diskScope(disk, 'ro'), 'GET', '/api/storage/lock')
  }

  // ---- the audit log ----

  logKey(): Promise<T.LogKey> {
    return this.authorizedJson('logger:get', 'GET', '/api/logger/key')
  }

  /** Every log file id, oldest first. An E device keeps none it serves: NotFoundError. */
  async logFiles(): Promise<string[]> {
    const ids: string[] = []
    for (;;) {
      // Past the last file: 404 (a device with a multiple of 128 files can list one page too far).
      const answer = await this.authorized(
        'logger:get',
        'GET',
        `/api/logger/list/${ids.length}`,
        {},
        ids.length === 0 ? [200] : [200, 404],
      )
      if (answer.status === 404) return ids
      const { total, id } = (parse(answer.bytes) ?? {}) as { total?: unknown; id?: unknown }
      const wellFormed =
        Number.isSafeInteger(total) &&
        (total as number) <= MAX_LOG_FILES &&
        Array.isArray(id) &&
        id.length > 0 &&
        id.every((x) => typeof x === 'string' && LOG_FILE_ID.test(x))
      if (!wellFormed) throw new UnexpectedAnswerError('the device sent a malformed log list')
      ids.push(...(id as string[]))
      if (ids.length >= (total as number)) return [...new Set(ids)]
    }
  }

  /** A log file, byte for byte as the device stores it. */
  async logFile(id: string): Promise<Buffer> {
    if (!LOG_FILE_ID.test(id)) throw new RangeError(`${JSON.stringify(id)} is not a log file id (8 hex digits)`)
    return (await this.authorized('logger:get', 'GET', `/api/logger/${id}`)).bytes
  }

  // ---- upgrades ----

  /** Stages an image (fw on P and E, ui on P); nothing is checked or installed yet. */
  async upload(
    kind: T.UpgradeKind,
    image: Uint8Array,
    onProgress?: (sent: number, total: number) => void,
  ): Promise<void> {
    const filename = kind === 'fw' ? 'firmware.bin' : 'webroot.tar'
    await this.openWhileFresh('system:upgrade', 'POST', `/api/system/upgrade/upload_${kind}`, {
      body: image,
      headers: {
        'Content-Type': 'application/octet-stream',
        'Content-Disposition': `attachment; filename="${filename}"`,
      },
      ...(onProgress ? { onProgress } : {}),
    })
  }

  /**
   * One look at the check: started (201), running (202) or
   * verified (200); a rejected image throws NotAcceptableError.
   */
  async check(kind: T.UpgradeKind): Promise<T.CheckState> {
    const { status } = await this.openWhileFresh(
      'system:upgrade',
      'GET',
      `/api/system/upgrade/check_${kind}`,
      {},
      [200, 201, 202],
    )
    return status === 200 ? 'verified' : status === 201 ? 'started' : 'running'
  }

  /** Starts the check and polls it until the image is verified (or throws why it is not). */
  async verify(
    kind: T.UpgradeKind,
    o: { intervalMs?: number; onPoll?(state: T.CheckState): void } = {},
  ): Promise<void> {
    for (let state = await this.check(kind); ; state = await this.check(kind)) {
      o.onPoll?.(state)
      if (state === 'verified') return
      await new Promise((resolve) => setTimeout(resolve, o.intervalMs ?? 250))
    }
  }

  /**
   * Installs the verified image: the app at once; firmware reboots the device into it. An older
   * firmware version at the current anti-rollback level needs `allowDowngrade` (the owner's confirmation).
   */
  async install(kind: T.UpgradeKind, o: { allowDowngrade?: boolean } = {}): Promise<void> {
    const path = `/api/system/upgrade/install_${kind}`
    if (o.allowDowngrade && kind === 'fw')
      await this.openWhileFresh('system:upgrade', 'POST', path, { json: { allow_downgrade: true } })
    else await this.openWhileFresh('system:upgrade', 'GET', path)
    if (kind === 'fw') this.forgetTokens()
  }
}

function parse(body: Buffer): unknown {
  if (body.length === 0) return undefined
  const text = body.toString('utf8')
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The `exp` claim of a bearer token (a JWT), if it has one. */
function tokenExpiry(token: string): number | undefined {
  try {
    const exp = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown })
      .exp
    return typeof exp === 'number' ? exp : undefined
  } catch {
    return undefined
  }
}

/** A base64 field of a success answer; one that is not base64 is no answer of the API. */
function decoded(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0)
    throw new UnexpectedAnswerError('the device sent a field that is not base64')
  return new Uint8Array(Buffer.from(text, 'base64'))
}

function cipherBody(input: T.EncryptInput): Record<string, string> {
  return {
    alg: input.alg,
    kid: input.kid,
    msg: b64(input.msg),
    ...(input.aad ? { aad: b64(input.aad) } : {}),
    ...(input.ctx ? { ctx: b64(input.ctx) } : {}),
    ...(input.extKid ? { ext_kid: input.extKid } : {}),
    ...(input.pubkey ? { pubkey: b64(input.pubkey) } : {}),
  }
}

function kidPath(kid: string): string {
  if (!/^[0-9a-f]{32}$/.test(kid)) throw new RangeError(`${JSON.stringify(kid)} is not a KID (32 hex digits)`)
  return kid
}

function diskScope(disk: 0 | 1, mode: 'ro' | 'rw'): string {
  if (disk !== 0 && disk !== 1) throw new RangeError('the device has Disk 0 and Disk 1')
  return `storage:disk${disk}${mode === 'rw' ? ':rw' : ''}`
}
