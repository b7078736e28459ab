import {
  appTypeWord,
  checkLabel,
  type CommandReply,
  type CommandRequest,
  EXT_AUTH_MAX_PAIRINGS,
  type ExtPairing,
  type ExtPairingsAnswer,
  fail,
  fixedBase64,
  type KeyRecord,
  KeyAttributeError,
  LogType,
  normaliseKid,
  pairingDescr,
  pidOfDescr,
  publicKeyKid,
  toBase64,
} from '../../protocol/index.js'
import { addJournaled, guarded } from './key-management.js'
import type { KeystoreContext } from './keystore-context.js'
import { normalisePublicKey } from './public-key.js'

type Body = Record<string, unknown>

/** The external authenticators' pairings (contract §1.2): serving CURVE25519 keys whose descr is `EXTAID` ‖ pid. */
function pairings(actor: KeystoreContext): ExtPairing[] {
  return actor.repository.keys().flatMap((key): ExtPairing[] => {
    const pid = key.descr && pidOfDescr(key.descr)
    if (!pid || key.type !== 'CURVE25519' || !key.publicKey || !actor.keys.serves(key.kid)) return []
    return [{ kid: key.kid, pid: toBase64(pid), aid: toBase64(key.publicKey), label: key.label }]
  })
}

/**
 * `ext_pair {aid, pid, label}`, the auth service's, for the user's token it forwards (checked by this service's guard
 * like every other key operation): imports the paired authenticator's `aid` as a public CURVE25519 key, KID from its
 * SHA-1 as any import, descr `EXTAID` ‖ pid, journaled as an import (KEY_IMPORT). A key stored already, or a ninth
 * pairing, is refused 406 before anything is journaled.
 */
export function extPair(actor: KeystoreContext, req: CommandRequest): Promise<CommandReply> {
  return guarded(actor, () => {
    const body = (req.body ?? {}) as Body
    const label = checkLabel(body.label)
    const aid = fixedBase64(body.aid, 32)
    const pid = fixedBase64(body.pid, 32)
    const publicKey = aid && normalisePublicKey('CURVE25519', aid)
    if (!publicKey || !pid) throw new KeyAttributeError('`aid` and `pid` must be base64 of 32 bytes')
    const kid = publicKeyKid(publicKey)
    if (!actor.keys.can(kid, { type: 'ADD' })) return fail(406, 'duplicate_key', 'This authenticator is paired already')
    if (pairings(actor).length >= EXT_AUTH_MAX_PAIRINGS)
      return fail(406, 'too_many_pairings', `At most ${EXT_AUTH_MAX_PAIRINGS} authenticators can be paired`)
    const now = actor.now()
    const record: KeyRecord = {
      kid,
      type: 'CURVE25519',
      label,
      created: now,
      updated: now,
      publicKey,
      descr: pairingDescr(pid),
    }
    return addJournaled(actor, req, record, LogType.KEY_IMPORT)
  })
}

/**
 * `ext_pairings {kid?}`, the auth service's, with no principal (no other service may send it): every pairing, and
 * for `kid` (a `keymgmt:use:<kid>` scope to approve) that key's type word and label when it serves.
 */
export function extPairings(actor: KeystoreContext, req: CommandRequest): CommandReply {
  const unavailable = actor.unavailable()
  if (unavailable) return unavailable
  const kid = normaliseKid(((req.body ?? {}) as Body).kid)
  const key: Readonly<KeyRecord> | undefined = kid && actor.keys.serves(kid) ? actor.repository.get(kid) : undefined
  const answer: ExtPairingsAnswer = {
    pairings: pairings(actor),
    ...(key ? { key: { word: appTypeWord(key.type, key.mode, key.secret !== undefined), label: key.label } } : {}),
  }
  return { status: 200, body: answer }
}
