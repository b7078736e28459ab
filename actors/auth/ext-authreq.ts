import { type AuthreqClaims, fromBase64, sealScope, signExtJwt } from '../../protocol/index.js'

/** The claims of an `authreq` but its sealed scopes (ext-auth contract §2.4.3). */
export type AuthreqFields = Omit<AuthreqClaims, 'scope'>

/** One paired authenticator: its pid (standard base64) and S_pair = X25519(eid_prv, aid). */
export interface AuthreqRecipient {
  pid: string
  sPair: Uint8Array
}

/**
 * The `authreq` eJWT: `text` sealed once per recipient under K(S_pair, jti) (scheme A, §2.5), keyed by its pid,
 * the claims in the firmware's order (iss, aud, iat, exp, jti, ctx, note, scope), signed with S_db under the
 * device's header. A pure function of its inputs: a real device's authreq is reproduced byte for byte from them.
 */
export function authreqJwt(
  fields: AuthreqFields,
  text: string,
  recipients: readonly AuthreqRecipient[],
  sDb: Uint8Array,
): string {
  const jti = fromBase64(fields.jti)
  const scope = Object.fromEntries(recipients.map(({ pid, sPair }) => [pid, sealScope(text, sPair, jti)]))
  const { iss, aud, iat, exp, ctx, note } = fields
  const claims = {
    iss,
    aud,
    iat,
    exp,
    jti: fields.jti,
    ...(ctx !== undefined ? { ctx } : {}),
    ...(note !== undefined ? { note } : {}),
    scope,
  }
  return signExtJwt(claims, sDb)
}
