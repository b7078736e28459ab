import type { Principal } from '../protocol/index.js'
import { HttpError } from './errors.js'
import type { TokenVerifier } from './types.js'

const BEARER = /^Bearer +(\S+) *$/i

/** The token of an `Authorization: Bearer` header, if it is one. */
export function bearerToken(header: string): string | undefined {
  return BEARER.exec(header)?.[1]
}

/**
 * The principal behind a request's Authorization header (`''` when absent, and then none). A
 * header that is present but not a valid bearer token is refused on every route, open ones
 * included, and before anything else (crypto-contract §0, step 1).
 */
export async function authenticate(header: string, tokens: TokenVerifier): Promise<Principal | undefined> {
  if (header === '') return undefined
  const token = bearerToken(header)
  const principal = token === undefined ? undefined : await tokens.verify(token)
  if (!principal) throw new HttpError(401, 'invalid_token', 'The bearer token is invalid or has expired')
  return principal
}
