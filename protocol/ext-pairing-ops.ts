/**
 * The key store's two operations for external authenticators, which only the auth service may send (bus/services.ts):
 * a pairing is a stored public key (ext-auth contract §1.2), so the key store keeps them and the auth service asks.
 */

/** Stores a paired authenticator's key; the user's bearer token is forwarded and checked by the key store itself. */
export const EXT_PAIR_OP = 'ext_pair'
/** The pairings (and a key's hint for a `keymgmt:use:<kid>` scope): no principal, the auth service's question. */
export const EXT_PAIRINGS_OP = 'ext_pairings'

/** `ext_pair`'s body: base64 of the 32-byte `aid` and `pid`, and the label already cut (ext-auth contract §1.2). */
export interface ExtPairBody {
  aid: string
  pid: string
  label: string
}

/** One pairing: its key's KID, the pid and aid in standard base64, the key's label. */
export interface ExtPairing {
  kid: string
  pid: string
  aid: string
  label: string
}

/** `ext_pairings {kid?}`'s answer: every pairing, and the named key's type word and label when it serves. */
export interface ExtPairingsAnswer {
  pairings: ExtPairing[]
  key?: { word: number; label: string }
}
