import { b64 } from './base64.js'
import { bearer, login } from './owner.js'
import { call, type Answer } from './http.js'

/** JSON POST/GET/DELETE against a device with a bearer token. */
export function api(
  url: string,
  token: string | undefined,
  body?: unknown,
  method = body === undefined ? 'GET' : 'POST',
): Promise<Answer> {
  return call(url, {
    method,
    headers: { ...(token ? bearer(token) : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  })
}

/** Tokens per scope, each logged in once (every login costs the brake's 500 ms). */
export class Tokens {
  private readonly cache = new Map<string, Promise<string>>()
  constructor(private readonly base: string) {}
  get(scope: string): Promise<string> {
    let token = this.cache.get(scope)
    if (!token) this.cache.set(scope, (token = login(this.base, scope)))
    return token
  }
}

/** Creates a key over HTTPS and returns its KID (throws when refused). */
export async function createKey(https: string, token: string, body: Record<string, unknown>): Promise<string> {
  const answer = await api(`${https}/api/keymgmt/create`, token, body)
  if (answer.status !== 200) throw new Error(`create refused: ${answer.status} ${answer.text}`)
  return answer.json.kid as string
}

export function bytesOf(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'base64'))
}

export { b64 }
