// The device's API from the page: plain requests, and a logged-in session that keeps one
// bearer token per scope. Only the derived key is kept, in memory: never the passphrase, and
// nothing in any storage that outlives the page.
import {
  buildLoginEjwt,
  derivePassphraseKeyAsync,
  DeviceUnreachableError,
  refusal,
  UnauthorizedError,
  type DeviceRefusedError,
  type LoginChallenge,
  type PassphraseKey,
} from '../client/browser.js'
import { PageError } from './page-error.js'
import { refusalWords, reworded } from './refusal-words.js'

/** The device was re-personalised (a wipeout) since the login: the kept key means nothing to it now. */
export class IdentityChangedError extends PageError {
  override readonly name = 'IdentityChangedError'
}

/** An hour: long enough for a sitting; a token that dies earlier (a reboot) is renewed once. */
const TOKEN_LIFETIME_SECONDS = 3600

export interface RequestOptions {
  token?: string
  /** GET without a body, POST with one, unless named. */
  method?: 'GET' | 'POST' | 'DELETE'
  body?: unknown
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

export class DeviceSession {
  readonly #tokens = new Map<string, Promise<string>>()
  readonly #eid: string
  readonly #key: PassphraseKey

  private constructor(
    eid: string,
    key: PassphraseKey,
    /** The owner's name, as the device calls them. */
    readonly user: string,
  ) {
    this.#eid = eid
    this.#key = key
  }

  /**
   * Derives the passphrase key (PBKDF2, once: every scope's login reuses it) and logs in for
   * `firstScope`, which tells at once whether the passphrase is right.
   */
  static async open(passphrase: string, firstScope: string): Promise<DeviceSession> {
    const first = await challenge()
    const session = new DeviceSession(first.eid, await derivePassphraseKeyAsync(passphrase, first.eid), first.lbl)
    await session.#remember(firstScope, session.#login(firstScope, first))
    return session
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

  /**
   * Runs `call` with this scope's token, minted at first use from the kept key; a token that died
   * (expiry, reboot: a 401) is replaced once.
   */
  async authorized<T>(scope: string, call: (token: string) => Promise<T>): Promise<T> {
    const token = this.#token(scope)
    try {
      return await call(await token)
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error
      this.#forget(scope, token)
      return call(await this.#token(scope))
    }
  }

  #token(scope: string): Promise<string> {
    return (
      this.#tokens.get(scope) ??
      this.#remember(
        scope,
        challenge().then((c) => this.#login(scope, c)),
      )
    )
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

  async #login(scope: string, c: TokenChallenge): Promise<string> {
    // A re-personalised device (wipeout) has a new eid, under which this key means nothing.
    if (c.eid !== this.#eid)
      throw new IdentityChangedError('The device has a new identity since you logged in: log out and in again.')
    try {
      const answer = (await deviceRequest('/api/auth/token', {
        body: { auth: buildLoginEjwt(this.#key, c, scope, TOKEN_LIFETIME_SECONDS) },
      })) as { token: string }
      return answer.token
    } catch (error) {
      // The device says no more than "Authentication failed", on purpose; a wrong passphrase is the likely cause.
      if (error instanceof UnauthorizedError)
        throw reworded(error, `Login refused: ${refusalWords(error)}. Check the passphrase.`)
      throw error
    }
  }
}
