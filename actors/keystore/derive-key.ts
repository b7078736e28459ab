import { CryptoInputError, CURVES } from '../../hal/index.js'
import {
  type CommandRequest,
  checkDescr,
  checkLabel,
  decodeBase64,
  isKeyType,
  keyMode,
  type KeyMode,
  type KeyRecord,
  type KeyType,
  keyTypes,
  LogType,
  publicKeyKid,
} from '../../protocol/index.js'
import { DuplicateKeyError, RepositoryFullError } from './errors.js'
import { cryptoKey, derivedSecret } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { Peer } from './crypto-request.js'
import { addJournaled, freshKid } from './key-management.js'
import type { KeystoreContext } from './keystore-context.js'

interface DeriveRequest {
  label: string
  /** As sent: an unknown type is the operation's 406, not a malformed request. */
  type: string
  mode?: KeyMode
  descr?: Uint8Array
  peer?: Peer
}

/**
 * `POST /api/keymgmt/derive` (crypto-contract §2, §4): ECDH of `kid` with its peer, HKDF-SHA256
 * with info `encedo-<TYPE>` to the target's size, and that is the new key's secret or private
 * scalar. Deterministic: an asymmetric key derived again has the same KID, a clash (406).
 * Journaled as KEY_DERIVE: a success with `kid` the new key and `source_kid` the key it came
 * from; a 400 or 406 with `kid` the source (when readable), as every crypto operation's.
 */
export const deriveKey: CryptoOperation<DeriveRequest> = {
  logType: LogType.KEY_DERIVE,
  keyChange: true,
  parse(request) {
    const label = checkLabel(request.value('label'))
    const type = request.value('type')
    if (typeof type !== 'string') throw request.bad('`type` must be a key type')
    const mode = isKeyType(type) ? keyMode(type, request.value('mode')) : undefined
    const descr = request.value('descr')
    const peer = request.peer()
    return {
      label,
      type,
      ...(mode ? { mode } : {}),
      ...(descr !== undefined ? { descr: checkDescr(descr, decodeBase64) } : {}),
      ...(peer ? { peer } : {}),
    }
  },
  async run(actor, request, kid, req) {
    const { type } = request
    if (!isKeyType(type)) throw new CryptoRefusal('unknown_type', '`type` is not a key type')
    const target = keyTypes[type]
    if (!('derived' in target)) throw new CryptoRefusal('not_derivable', `A ${type} key cannot be derived`)
    const okm = derivedSecret(
      actor,
      cryptoKey(actor, kid),
      request.peer,
      `encedo-${type}`,
      new Uint8Array(0),
      target.derived,
    )
    // The repository keeps its own copy of the secret: this one is wiped whatever happens.
    try {
      return await store(actor, req, kid, { ...request, type }, keyMaterial(actor, type, okm))
    } finally {
      okm.fill(0)
    }
  },
}

async function store(
  actor: KeystoreContext,
  req: CommandRequest,
  sourceKid: string,
  request: DeriveRequest & { type: KeyType },
  material: Pick<KeyRecord, 'secret' | 'publicKey'>,
): Promise<{ kid: string }> {
  const newKid = material.publicKey ? publicKeyKid(material.publicKey) : freshKid(actor)
  if (!actor.keys.can(newKid, { type: 'ADD' }))
    throw new CryptoRefusal('duplicate_key', 'The derived key exists already')
  const now = actor.now()
  const record: KeyRecord = {
    kid: newKid,
    type: request.type,
    label: request.label,
    created: now,
    updated: now,
    ...material,
    ...(request.mode ? { mode: request.mode } : {}),
    ...(request.descr ? { descr: request.descr } : {}),
  }
  try {
    return (await addJournaled(actor, req, record, LogType.KEY_DERIVE, { source_kid: sourceKid })).body as {
      kid: string
    }
  } catch (err) {
    if (err instanceof RepositoryFullError)
      throw new CryptoRefusal('repository_full', 'The key repository has no free slot')
    if (err instanceof DuplicateKeyError) throw new CryptoRefusal('duplicate_key', 'The derived key exists already')
    throw err
  }
}

/**
 * The derived bytes as the target's secret: a symmetric key as they are, an X25519/X448 scalar
 * clamped (crypto-contract §4; the curve would clamp it on use, so its public key is the same),
 * an EdDSA seed, a SECP scalar masked to the curve's bit length (406 when 0 or not below the order).
 */
function keyMaterial(actor: KeystoreContext, type: KeyType, okm: Uint8Array): Pick<KeyRecord, 'secret' | 'publicKey'> {
  const spec = keyTypes[type]
  try {
    switch (spec.kind) {
      case 'ecdh':
        clamp(okm)
        return { secret: okm, publicKey: actor.engine.publicKey(spec.curve, okm) }
      case 'ec': {
        const curve = CURVES[spec.curve]
        if (curve.kind === 'weierstrass') okm[0]! &= curve.topByteMask
        return { secret: okm, publicKey: actor.engine.publicKey(spec.curve, okm) }
      }
      case 'eddsa':
        return { secret: okm, publicKey: actor.engine.eddsaPublicKey(spec.curve, okm) }
      default:
        return { secret: okm }
    }
  } catch (err) {
    if (err instanceof CryptoInputError)
      throw new CryptoRefusal('scalar_out_of_range', 'The derived scalar is out of range')
    throw err
  }
}

/**
 * RFC 7748 §5's clamping, in place: X25519 clears bits 0–2 of the first byte, bit 7 of the last
 * and sets its bit 6; X448 clears bits 0–1 of the first byte and sets bit 7 of the last.
 */
function clamp(scalar: Uint8Array): void {
  const last = scalar.length - 1
  if (scalar.length === 32) {
    scalar[0]! &= 0xf8
    scalar[last] = (scalar[last]! & 0x7f) | 0x40
  } else {
    scalar[0]! &= 0xfc
    scalar[last]! |= 0x80
  }
}
