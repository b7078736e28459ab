import { EXT_JWT_APP_HEADER, extJwtSigningInput, toBase64Url } from '../protocol/browser.js'
import type { AgreedKey } from './aid-key.js'

/** An eJWT in the app's header order (§2.3), its MAC made by an agreed key that stays in its provider. */
export async function signExtJwtWith(key: AgreedKey, payload: Record<string, unknown>): Promise<string> {
  const signingInput = extJwtSigningInput(payload, EXT_JWT_APP_HEADER)
  return `${signingInput}.${toBase64Url(await key.hmac(new TextEncoder().encode(signingInput)))}`
}
