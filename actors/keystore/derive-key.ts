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
import { cryptoKey } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { Peer } from './crypto-request.js'
import { derivedSecret } from './crypto-shared-secret.js'
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
      return await store(actor, req, { ...request, type }, keyMaterial(actor, type, okm))
    } finally {
      okm.fill(0)
    }
  },
}

async function store(
  actor: KeystoreContext,
  req: CommandRequest,
  request: DeriveRequest & { type: KeyType },
  material: Pick<KeyRecord, 'secret' | 'publicKey'>,
): Promise<{ kid: string }> {
  const newKid = material.publicKey ? publicKeyKid(material.publicKey) : freshKid(actor)
  if (actor.repository.has(newKid)) throw new CryptoRefusal('duplicate_key', 'The derived key exists already')
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
    return (await addJournaled(actor, req, record, LogType.KEY_DERIVE)).body as { kid: string }
  } catch (err) {
    if (err instanceof RepositoryFullError)
      throw new CryptoRefusal('repository_full', 'The key repository has no free slot')
    if (err instanceof DuplicateKeyError) throw new CryptoRefusal('duplicate_key', 'The derived key exists already')
    throw err
  }
}

/**
 * The derived bytes as the target's secret: a symmetric key as they are, an X25519/X448 scalar as
 * they are (the curve clamps it), an EdDSA seed, a SECP scalar masked to the curve's bit length
 * (406 when 0 or not below the order).
 */
function keyMaterial(actor: KeystoreContext, type: KeyType, okm: Uint8Array): Pick<KeyRecord, 'secret' | 'publicKey'> {
  const spec = keyTypes[type]
  try {
    switch (spec.kind) {
      case 'ecdh':
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
