// The device's API from the page: plain requests, and a logged-in session that keeps one
// bearer token per scope. Only the derived key is kept, in memory: never the passphrase, and
// nothing in any storage that outlives the page. A session an authenticator approved keeps its one
// token the same way.
import {
  buildLoginEjwt,
  derivePassphraseKeyAsync,
  DeviceUnreachableError,
  fromBase64,
  refusal,
  UnauthorizedError,
  UnexpectedAnswerError,
  type DeviceJson,
  type DeviceRefusedError,
  type JsonInput,
  type LoginChallenge,
  type PassphraseKey,
} from '../client/browser.js'
import { scopeSatisfies } from '../protocol/browser.js'
import { PageError } from './page-error.js'
import { refusalWords, reworded } from './refusal-words.js'

/** The device was re-personalised (a wipeout) since the login: the kept key means nothing to it now. */
export class IdentityChangedError extends PageError {
  override readonly name = 'IdentityChangedError'
}

/**
 * Every login of the session ended: the owner logged out or went idle, or the device forgot its tokens (a
 * restart). Nothing is minted after it: only a new login starts again.
 */
export class SessionEndedError extends PageError {
  override readonly name = 'SessionEndedError'
}

/** An hour: long enough for a sitting; a token past its `exp` is renewed from the kept key, once. */
const TOKEN_LIFETIME_SECONDS = 3600
/** A token this close to its `exp` counts as expired: the device's clock may run ahead of the browser's. */
const EXPIRY_MARGIN_SECONDS = 60

/**
 * Why a session ends when the device restarted: its watch saw a new boot, a token within its `exp` was refused (a
 * 401: the device forgot it), or a login challenge came under another boot's session key (`spk`).
 */
export const RESTARTED_MESSAGE = 'The device restarted, so every login ended: log in again.'

export interface RequestOptions {
  token?: string
  /** GET without a body, POST with one, unless named. */
  method?: 'GET' | 'POST' | 'DELETE'
  body?: unknown
  /** No answer within this many ms counts as none (DeviceUnreachableError). */
  timeoutMs?: number
}

/**
 * One request; resolves to the parsed JSON answer (undefined for an empty one), rejects with the
 * client's typed errors: a DeviceRefusedError by status, or a DeviceUnreachableError.
 */
export async function deviceRequest(path: string, options: RequestOptions = {}): Promise<unknown> {
  const text = new TextDecoder().decode(await send(path, options))
  return text === '' ? undefined : parseJson(text)
}

/** The answer's bytes as they are (a journal file, a public key). */
export async function send(path: string, options: RequestOptions = {}): Promise<Uint8Array> {
  const headers: Record<string, string> = {}
  if (options.token) headers.Authorization = `Bearer ${options.token}`
  if (options.body !== undefined) headers['Content-Type'] = 'application/json'
  const method = options.method ?? (options.body === undefined ? 'GET' : 'POST')
  let answer: Response
  let bytes: Uint8Array
  try {
    answer = await fetch(path, {
      method,
      headers,
      cache: 'no-store',
      ...(options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(options.timeoutMs) }),
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    })
    bytes = new Uint8Array(await answer.arrayBuffer())
  } catch (cause) {
    throw new DeviceUnreachableError(path, { cause })
  }
  if (!answer.ok) throw answerRefusal(answer.status, new TextDecoder().decode(bytes), `${method} ${path}`)
  return bytes
}

/** The client's typed error for a refused request, from its status and the answer's text (`{error, message}`). */
export function answerRefusal(status: number, text: string, what: string): DeviceRefusedError {
  return refusal(status, parseJson(text), what)
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

interface TokenChallenge extends LoginChallenge {
  eid: string
  /** The owner's name (config `user`). */
  lbl: string
}

const challenge = () => deviceRequest('/api/auth/token') as Promise<TokenChallenge>

/** The public login challenge's identity: the device's `eid` and its owner's name, known with no passphrase. */
export async function deviceIdentity(): Promise<{ eid: string; user: string }> {
  const { eid, lbl } = await challenge()
  return { eid, user: lbl }
}

/** The device's JSON calls with no token (the approval's `ext/request` and `ext/token`), as client/ calls them. */
export const openDevice: Pick<DeviceJson, 'json'> = {
  json: <R>(method: string, path: string, input: JsonInput = {}) =>
    deviceRequest(path, { method: methodOf(method), body: input.json }) as Promise<R>,
}

function methodOf(method: string): 'GET' | 'POST' | 'DELETE' {
  if (method !== 'GET' && method !== 'POST' && method !== 'DELETE') throw new RangeError(`no ${method} from the app`)
  return method
}

/** A scope the approved session was not granted: the page asks nothing of the device for it. */
export class NotGrantedError extends PageError {
  override readonly name = 'NotGrantedError'
}

/** The approved token died (its period ended, or the device restarted): only a new approval gives another. */
export class ApprovalEndedError extends PageError {
  override readonly name = 'ApprovalEndedError'
}

/** How a session gets the token of a scope; `again` after the device refused the one it gave (401). */
type Mint = (scope: string, again: boolean) => Promise<string>

/** What the claims of an approved token say of it (the page reads them; the device checked them). */
export interface Approved {
  scope: string
  /** The authenticator's KID in hex (the bearer's `sub`). */
  kid: string
  /** Unix seconds. */
  exp: number
}

/** Who logged in with a passphrase: the token's `sub`, `U` (the user's) or `M` (the master's). */
export type PassphraseRole = 'U' | 'M'

export class DeviceSession implements DeviceJson {
  readonly #tokens = new Map<string, Promise<string>>()
  #mint: Mint
  #ended: string | undefined
  readonly #whenEnded: ((message: string) => void)[] = []
  /** Set by the first login; undefined for an approved session. */
  #role: PassphraseRole | undefined

  private constructor(
    mint: Mint,
    /** The owner's name, as the device calls them. */
    readonly user: string,
    /** Set when an authenticator approved the session: one token, of one scope, role ExtAuth. */
    readonly approved?: Approved,
  ) {
    this.#mint = mint
  }

  get role(): PassphraseRole | undefined {
    return this.#role
  }

  /** Calls `listener` once, with the reason, when the session ends (by `end`, or a token the device forgot). */
  whenEnded(listener: (message: string) => void): void {
    this.#whenEnded.push(listener)
  }

  /** Ends the session: the kept key is dropped, and every later call fails with SessionEndedError unsent. */
  end(message: string): void {
    if (this.#ended !== undefined) return
    this.#ended = message
    this.#tokens.clear()
    this.#mint = () => Promise.reject(new SessionEndedError(message))
    for (const listener of this.#whenEnded.splice(0)) listener(message)
  }

  /**
   * Derives the passphrase key (PBKDF2, once: every scope's login reuses it) and logs in for
   * `firstScope`, which tells at once whether the passphrase is right.
   */
  static async open(passphrase: string, firstScope: string): Promise<DeviceSession> {
    const first = await challenge()
    return DeviceSession.#start(await derivePassphraseKeyAsync(passphrase, first.eid), firstScope, first)
  }

  /** As `open`, with the key already derived for the device's eid (the set-up wizard's user key). */
  static async withKey(key: PassphraseKey, firstScope: string): Promise<DeviceSession> {
    return DeviceSession.#start(key, firstScope, await challenge())
  }

  static async #start(key: PassphraseKey, firstScope: string, first: TokenChallenge): Promise<DeviceSession> {
    const mint: Mint = async (scope) => {
      const next = await challenge()
      // Another boot's session key: the device restarted since the login, and every login ended with it.
      if (next.eid === first.eid && next.spk !== first.spk) {
        session.end(RESTARTED_MESSAGE)
        throw new SessionEndedError(RESTARTED_MESSAGE)
      }
      return login(first.eid, key, scope, next)
    }
    const session = new DeviceSession(mint, first.lbl)
    const token = await session.#remember(firstScope, login(first.eid, key, firstScope, first))
    const { sub } = claimsIn(token)
    session.#role = sub === 'M' ? 'M' : 'U'
    return session
  }

  /**
   * A session on the token an authenticator's approval gave (`ext/token`): it serves the scopes that token
   * satisfies, as the device judges them, and nothing else; it cannot be renewed.
   */
  static approvedBy(token: string, user: string): DeviceSession {
    const approved = claimsOf(token)
    const mint: Mint = (scope, again) => {
      if (again) return Promise.reject(new ApprovalEndedError(APPROVAL_ENDED))
      if (!scopeSatisfies(approved.scope, scope, {}))
        return Promise.reject(
          new NotGrantedError(
            `This session was approved for ${approved.scope} only, and this needs ${scope}: ` +
              'log in with the passphrase for it.',
          ),
        )
      return Promise.resolve(token)
    }
    return new DeviceSession(mint, user, approved)
  }

  /** A request under this scope's token (see `authorized`). */
  request(path: string, scope: string, options: Omit<RequestOptions, 'token'> = {}): Promise<unknown> {
    return this.authorized(scope, (token) => deviceRequest(path, { ...options, token }))
  }

  /** A GET under this scope's token. */
  get(path: string, scope: string): Promise<unknown> {
    return this.request(path, scope)
  }

  /** A GET's bytes under this scope's token. */
  bytes(path: string, scope: string): Promise<Uint8Array> {
    return this.authorized(scope, (token) => send(path, { token }))
  }

  /** client/'s calls on the device (the external authenticator's) through this session. */
  json<R>(method: string, path: string, input: JsonInput = {}): Promise<R> {
    return openDevice.json<R>(method, path, input)
  }

  authorizedJson<R>(scope: string, method: string, path: string, input: JsonInput = {}): Promise<R> {
    return this.request(path, scope, { method: methodOf(method), body: input.json }) as Promise<R>
  }

  /**
   * Runs `call` with this scope's token, minted at first use. A token the device refuses (401) is replaced once
   * only when it is past its own `exp`; one still within it was forgotten by the device (a restart, which ends
   * every login), so the session ends instead: nothing is minted behind the owner's back.
   */
  async authorized<T>(scope: string, call: (token: string) => Promise<T>): Promise<T> {
    if (this.#ended !== undefined) throw new SessionEndedError(this.#ended)
    const pending = this.#token(scope, false)
    const token = await pending
    try {
      return await call(token)
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error
      this.#forget(scope, pending)
      if (!this.approved && !expired(token)) {
        this.end(RESTARTED_MESSAGE)
        throw new SessionEndedError(RESTARTED_MESSAGE, { cause: error })
      }
      return call(await this.#token(scope, true))
    }
  }

  #token(scope: string, again: boolean): Promise<string> {
    return this.#tokens.get(scope) ?? this.#remember(scope, this.#mint(scope, again))
  }

  #remember(scope: string, token: Promise<string>): Promise<string> {
    this.#tokens.set(scope, token)
    token.catch(() => this.#forget(scope, token))
    return token
  }

  /** Unless a request running alongside has already replaced it. */
  #forget(scope: string, token: Promise<string>): void {
    if (this.#tokens.get(scope) === token) this.#tokens.delete(scope)
  }
}

const APPROVAL_ENDED = 'The approved session has ended (its period is over, or the device restarted): log in again.'

async function login(eid: string, key: PassphraseKey, scope: string, c: TokenChallenge): Promise<string> {
  // A re-personalised device (wipeout) has a new eid, under which this key means nothing.
  if (c.eid !== eid)
    throw new IdentityChangedError('The device has a new identity since you logged in: log out and in again.')
  try {
    const answer = (await deviceRequest('/api/auth/token', {
      body: { auth: buildLoginEjwt(key, c, scope, TOKEN_LIFETIME_SECONDS) },
    })) as { token: string }
    return answer.token
  } catch (error) {
    // The device says no more than "Authentication failed", on purpose; a wrong passphrase is the likely cause.
    if (error instanceof UnauthorizedError)
      throw reworded(error, `Login refused: ${refusalWords(error)}. Check the passphrase.`)
    throw error
  }
}

/** A bearer's claims, as the page may read them (the device checks them; the page only learns from them). */
function claimsIn(token: string): Record<string, unknown> {
  let claims: unknown
  try {
    claims = JSON.parse(new TextDecoder().decode(fromBase64(token.split('.')[1] ?? '')))
  } catch (cause) {
    throw new UnexpectedAnswerError('the device gave a token that is no JWT', { cause })
  }
  return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : {}
}

/** Past its `exp` (or near it), by this browser's clock, which set that `exp` at the login. */
function expired(token: string): boolean {
  const { exp } = claimsIn(token)
  return typeof exp !== 'number' || exp <= Date.now() / 1000 + EXPIRY_MARGIN_SECONDS
}

/** The approved bearer's claims: `{scope, sub, exp}` (sub the 16 KID bytes in base64, ext-auth-contract §1.5). */
function claimsOf(token: string): Approved {
  const { scope, sub, exp } = claimsIn(token)
  const kid = typeof sub === 'string' ? hexOf(sub) : undefined
  if (typeof scope !== 'string' || kid === undefined || typeof exp !== 'number')
    throw new UnexpectedAnswerError("the device's approved token lacks scope, sub or exp")
  return { scope, kid, exp }
}

function hexOf(base64: string): string | undefined {
  try {
    const bytes = fromBase64(base64)
    return bytes.length === 16 ? Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('') : undefined
  } catch {
    return undefined
  }
}
