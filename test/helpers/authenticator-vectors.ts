// What the vector tests use: the core's builders, and the device's check of an authenticator's JWT.
import { extJwtSigned, parseExtJwt, x25519Agree } from '../../protocol/index.js'

export { signExtJwt } from '../../protocol/index.js'
import type { ApprovalKeys } from '../../authenticator/index.js'

export {
  buildAuthreply,
  buildPairingReply,
  grantedScope,
  isPeriod,
  openEvent,
  pushTokenBody,
  readEventData,
  readPairingRequest,
  unpairBody,
  type ApprovalKeys,
} from '../../authenticator/index.js'

/** The device's check (§1.5 step 4): HS256 over the received bytes with S_pair. */
export function signedBy(jwt: string, keys: ApprovalKeys): boolean {
  return extJwtSigned(parseExtJwt(jwt), x25519Agree(keys.aidPrv, keys.eid))
}
