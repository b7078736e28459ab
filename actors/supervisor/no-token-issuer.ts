import type { TokenVerifier } from '../../gateway/types.js'

/**
 * Until the auth actor exists nothing can issue a bearer token, so every presented token is
 * invalid (401), as the contract demands of a token the device did not mint.
 */
export const noTokenIssuer: TokenVerifier = {
  verify: async () => undefined,
}
