// One device's exchange as its owner's program has it: requests, and the logins that authorize them.
import { buildLoginEjwt } from './ejwt-builder.js'
import { codedRefusal as refusal } from './coded-errors.js'
import { derivePassphraseKeyAsync, type PassphraseKey } from './passphrase-key.js'
import { personalise } from './personalise.js'
import { Transport, type Exchange, type RequestInput, type TransportOptions } from './transport.js'
import type * as T from './types.js'
import { parseAnswer } from './wire.js'

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

/** Renew a token this long before the device would refuse it. */
const RENEW_MARGIN_S = 30

/**
 * The exchange with one device. Each authorized request logs in for the scope it needs (once: tokens
 * are cached per scope, renewed before they expire and once more when the device answers 401, as
 * after a reboot). The passphrase's key is derived once per device identity (`eid`).
 */
export class DeviceSession {
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
    if (!ok.includes(answer.status)) throw refusal(answer.status, parseAnswer(answer.bytes), `${method} ${path}`)
    return answer
  }

  async json<R>(method: string, path: string, input: RequestInput = {}): Promise<R> {
    return parseAnswer((await this.call(method, path, input)).bytes) as R
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
    if (!ok.includes(answer.status)) throw refusal(answer.status, parseAnswer(answer.bytes), `${method} ${path}`)
    return answer
  }

  async authorizedJson<R>(scope: string, method: string, path: string, input: RequestInput = {}): Promise<R> {
    return parseAnswer((await this.authorized(scope, method, path, input)).bytes) as R
  }

  /** As `authorized`, but without a token while the device is fresh: some routes are open until it has an owner. */
  async openWhileFresh(
    scope: string,
    method: string,
    path: string,
    input: RequestInput = {},
    ok: readonly number[] = [200],
  ): Promise<Exchange> {
    const { inited } = await this.json<T.Status>('GET', '/api/system/status')
    if (inited !== false) return this.authorized(scope, method, path, input, ok)
    return this.call(method, path, input, ok)
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
    const derive = this.o.deriveKey ?? derivePassphraseKeyAsync
    const keys = async (eid: string) => {
      const [user, master] = await Promise.all([derive(passphrases.user, eid), derive(passphrases.master, eid)])
      return { user, master }
    }
    return personalise(this, keys, { origin: this.transport.origin, ...cfg }, this.now())
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
