import {
  anonymousSearchAllowed,
  authorized,
  base64Field,
  decodeBase64,
  checkDescr,
  checkLabel,
  type CommandReply,
  type CommandRequest,
  encodeBase64,
  fail,
  gotType,
  isAsymmetric,
  isKeyType,
  type JournalEntry,
  KeyAttributeError,
  keyMode,
  keyOperationAccess,
  type KeyRecord,
  keyTypes,
  listedType,
  LogResult,
  LogType,
  normaliseKid,
  parseDescrPattern,
  publicKeyKid,
  wholeNumber,
} from '../../protocol/index.js'
import { CryptoInputError, isStorageFull } from '../../hal/index.js'
import type { KeyEvent } from '../../machines/index.js'
import { journalSubject } from '../host/index.js'
import { DuplicateKeyError, RepositoryFullError } from './errors.js'
import { generateKeyMaterial } from './key-material.js'
import type { KeystoreContext } from './keystore-context.js'
import { normalisePublicKey } from './public-key.js'
import { storedKey } from './stored-key.js'
import { holdsUseScope, isUseScope } from './use-scope.js'

const ADD: KeyEvent = { type: 'ADD' }
const ADD_FAILED: KeyEvent = { type: 'ADD_FAILED' }
const UPDATE: KeyEvent = { type: 'UPDATE' }
const RETIRE: KeyEvent = { type: 'RETIRE' }
const DELETE: KeyEvent = { type: 'DELETE' }
const RESTORE: KeyEvent = { type: 'RESTORE' }

/** Keys per page of list and search. */
export const PAGE = 15

type Body = Record<string, unknown>

/** A 400 with the contract's body; KeyAttributeError messages name the field, never a value. */
function badRequest(message: string): CommandReply {
  return fail(400, 'bad_request', message)
}

function bodyOf(req: CommandRequest): Body {
  return (req.body ?? {}) as Body
}

/**
 * Runs a key-management handler behind the device's gate, turning attribute errors into 400.
 * The repository's own refusals (full, duplicate) are the contract's 406: the operation failed.
 */
export async function guarded(
  actor: KeystoreContext,
  run: () => Promise<CommandReply> | CommandReply,
): Promise<CommandReply> {
  const unavailable = actor.unavailable()
  if (unavailable) return unavailable
  try {
    return await run()
  } catch (err) {
    if (err instanceof KeyAttributeError) return badRequest(err.message)
    if (err instanceof RepositoryFullError) return fail(406, 'repository_full', 'The key repository has no free slot')
    if (err instanceof DuplicateKeyError) return fail(406, 'duplicate_key', 'A key with this kid exists already')
    throw err
  }
}

/** A JSON null counts as an absent field (crypto-contract §0: clients send `"descr": null`). */
function absent(value: unknown): value is undefined | null {
  return value === undefined || value === null
}

function descrOf(body: Body): Uint8Array | undefined {
  return absent(body.descr) ? undefined : checkDescr(body.descr, decodeBase64)
}

function typeOf(body: Body) {
  if (!isKeyType(body.type)) throw new KeyAttributeError(`\`type\` must be one of ${Object.keys(keyTypes).join(', ')}`)
  return body.type
}

/**
 * Journals a change of the repository with the key's `event`, then makes it: a change the journal
 * cannot record does not happen, and on a full disk nothing at all is written. Should the
 * repository fail after the record (its memory is then unchanged), a second record, result ERROR,
 * says the change did not happen (with the key's `failed` event, if the failure changes its state),
 * if the journal can still take one; the failure is thrown.
 */
async function journaled(
  actor: KeystoreContext,
  change: { kid: string; event: KeyEvent; failed?: KeyEvent; entry: JournalEntry },
  run: () => Promise<unknown>,
): Promise<void> {
  const { kid, entry } = change
  await actor.keys.send(kid, change.event, [entry])
  try {
    await run()
  } catch (err) {
    const undone: JournalEntry = {
      ...entry,
      result: LogResult.ERROR,
      data: { ...entry.data, source: isStorageFull(err) ? 507 : 500 },
    }
    await (change.failed ? actor.keys.send(kid, change.failed, [undone]) : actor.journal([undone])).catch(
      (journalErr: unknown) =>
        actor.logger.error(
          { err: (journalErr as Error).message, kid: entry.data?.kid },
          'a key change that failed could not be journaled as failed',
        ),
    )
    throw err
  } finally {
    actor.publish()
  }
}

/**
 * Stores a new key, journaled first (with `data` besides the key's own); a repository without a
 * slot left refuses it before anything is journaled.
 */
export async function addJournaled(
  actor: KeystoreContext,
  req: CommandRequest,
  record: KeyRecord,
  type: number,
  data: Record<string, unknown> = {},
): Promise<CommandReply> {
  if (!actor.repository.hasRoom()) throw new RepositoryFullError()
  const entry: JournalEntry = {
    type,
    result: LogResult.OK,
    ...journalSubject(req.principal),
    data: {
      source: 200,
      rid: req.rid,
      kid: record.kid,
      type: record.type,
      ...(record.mode ? { mode: record.mode } : {}),
      at: record.created,
      ...data,
    },
  }
  await journaled(actor, { kid: record.kid, event: ADD, failed: ADD_FAILED, entry }, () => actor.repository.add(record))
  return { status: 200, body: { kid: record.kid } }
}

/**
 * `POST /api/keymgmt/create {label*, type*, mode?, descr?}` → `{kid}`. An asymmetric key's KID is
 * that of its public key, so a clash with a stored key (the same key imported) is refused (406).
 */
export function createKey(actor: KeystoreContext, req: CommandRequest): Promise<CommandReply> {
  return guarded(actor, async () => {
    const body = bodyOf(req)
    const label = checkLabel(body.label)
    const type = typeOf(body)
    const mode = keyMode(type, body.mode)
    const descr = descrOf(body)
    let material: ReturnType<typeof generateKeyMaterial>
    try {
      material = generateKeyMaterial(type, actor.engine, actor.random)
    } catch (err) {
      // An engine's refusal (its message names no key bytes); an entropy failure is the device's fault, not this key's.
      if (!(err instanceof CryptoInputError)) throw err
      actor.logger.error({ err: err.message, type }, 'key generation failed')
      return fail(406, 'generation_failed', `A ${type} key could not be generated`)
    }
    try {
      const kid = material.publicKey ? publicKeyKid(material.publicKey) : freshKid(actor)
      if (!actor.keys.can(kid, ADD)) throw new DuplicateKeyError(kid)
      const now = actor.now()
      const record = newRecord({ kid, type, label, created: now, updated: now, ...material }, mode, descr)
      return await addJournaled(actor, req, record, LogType.KEY_GENERATION)
    } finally {
      material.secret.fill(0)
    }
  })
}

/** A random KID (symmetric keys) that no key has. */
export function freshKid(actor: KeystoreContext): string {
  let kid: string
  do kid = Buffer.from(actor.random(16)).toString('hex')
  while (!actor.keys.can(kid, ADD))
  return kid
}

/** A new key's record: `fields`, then its mode and description when it has them. */
function newRecord(fields: KeyRecord, mode: KeyRecord['mode'], descr: Uint8Array | undefined): KeyRecord {
  return { ...fields, ...(mode ? { mode } : {}), ...(descr ? { descr } : {}) }
}

/**
 * `POST /api/keymgmt/import {label*, pubkey*, type*, mode?, descr?}` → `{kid}`: a public key of any
 * asymmetric type, KID from its SHA-1. A malformed request is 400; a key that is not one of the
 * type (length, point, modulus) or is stored already is 406: the operation failed.
 */
export function importKey(actor: KeystoreContext, req: CommandRequest): Promise<CommandReply> {
  return guarded(actor, () => {
    const body = bodyOf(req)
    const label = checkLabel(body.label)
    const type = typeOf(body)
    if (!isAsymmetric(type)) throw new KeyAttributeError('Only public keys can be imported: `type` must be asymmetric')
    const mode = keyMode(type, body.mode)
    const descr = descrOf(body)
    const raw = base64Field(body.pubkey)
    if (!raw) throw new KeyAttributeError('`pubkey` must be base64')
    const publicKey = normalisePublicKey(type, raw)
    if (!publicKey) return fail(406, 'bad_public_key', `\`pubkey\` is not a ${type} public key`)
    const kid = publicKeyKid(publicKey)
    if (!actor.keys.can(kid, ADD)) return fail(406, 'duplicate_key', 'This public key is stored already')
    const now = actor.now()
    const record = newRecord({ kid, type, label, created: now, updated: now, publicKey }, mode, descr)
    return addJournaled(actor, req, record, LogType.KEY_IMPORT)
  })
}

const KID_MALFORMED = '`kid` must be 32 hex characters'

function kidParam(req: CommandRequest): string {
  const kid = normaliseKid(req.params?.kid ?? bodyOf(req).kid)
  if (!kid) throw new KeyAttributeError(KID_MALFORMED)
  return kid
}

function notFound(): CommandReply {
  return fail(404, 'key_not_found', 'No key with this kid')
}

/** `GET /api/keymgmt/get/:kid` → `{type, pubkey?, updated, descr?}`: never private material. */
export function getKey(actor: KeystoreContext, req: CommandRequest): Promise<CommandReply> {
  return guarded(actor, async () => {
    const kid = normaliseKid(req.params?.kid ?? bodyOf(req).kid)
    // The guard let a `keymgmt:use:…` token through while it could not see the KID (one in the body,
    // or none): this is the one exact check, before a malformed KID's 400 (the gateway's order).
    const { principal } = req
    const allowed =
      principal &&
      (isUseScope(principal)
        ? holdsUseScope(principal, kid)
        : authorized(keyOperationAccess('get'), principal, { kid }))
    if (!allowed) return actor.denied(req)
    if (!kid) return badRequest(KID_MALFORMED)
    const key = storedKey(actor, kid)
    if (!key) return notFound()
    return {
      status: 200,
      body: {
        type: gotType(key.type),
        ...(key.publicKey ? { pubkey: encodeBase64(key.publicKey) } : {}),
        updated: key.updated,
        ...(key.descr ? { descr: encodeBase64(key.descr) } : {}),
      },
    }
  })
}

/** `DELETE /api/keymgmt/delete/:kid`: the slot's bytes are destroyed, not just flagged. */
export function deleteKey(actor: KeystoreContext, req: CommandRequest): Promise<CommandReply> {
  return guarded(actor, async () => {
    const kid = kidParam(req)
    const key = storedKey(actor, kid)
    if (!key) return notFound()
    // Out of service before its end is journaled (the machine's RETIRE): crypto operations overlap
    // this one, and none may use the key once KEY_DELETE can be in the journal.
    await actor.keys.send(kid, RETIRE)
    actor.expanded.drop(kid)
    try {
      // Journaled first: a deletion the journal cannot record does not happen. One recorded has
      // happened: should its slot not be overwritten, the key is gone all the same (the repository
      // drops it first and retries the tombstone) and the failure answered.
      await actor.keys.send(kid, DELETE, [
        {
          type: LogType.KEY_DELETE,
          result: LogResult.OK,
          ...journalSubject(req.principal),
          data: { source: 200, rid: req.rid, kid, type: key.type },
        },
      ])
    } catch (err) {
      // Back in service; should the journal not take that either, the key stays out of it until the next boot.
      await actor.keys
        .send(kid, RESTORE)
        .catch((restoreErr: unknown) =>
          actor.logger.error({ err: (restoreErr as Error).message, kid }, 'a key whose deletion failed stays retired'),
        )
      throw err
    }
    try {
      await actor.repository.remove(kid)
    } catch (err) {
      actor.logger.error(
        { err: (err as Error).message, kid },
        "a deleted key's slot could not be overwritten yet: retried before the next change",
      )
      throw err
    } finally {
      // The repository has dropped it, whether or not its slot was overwritten.
      actor.publish()
    }
    return { status: 200, body: {} }
  })
}

/**
 * `POST /api/keymgmt/update {kid*, label*, descr?}`: the label and description are replaced, so an
 * absent `descr` clears it (crypto-contract §2). `updated` always moves forward, even within a second.
 */
export function updateKey(actor: KeystoreContext, req: CommandRequest): Promise<CommandReply> {
  return guarded(actor, async () => {
    const body = bodyOf(req)
    const kid = kidParam(req)
    const label = checkLabel(body.label)
    const descr = descrOf(body)
    const key = storedKey(actor, kid)
    if (!key) return notFound()
    const { descr: _replaced, ...kept } = key
    const updated: KeyRecord = {
      ...kept,
      label,
      updated: Math.max(actor.now(), key.updated + 1),
      ...(descr ? { descr } : {}),
    }
    // A new version needs a spare slot: refused before anything is journaled.
    if (!actor.repository.hasRoom()) throw new RepositoryFullError()
    const entry: JournalEntry = {
      type: LogType.KEY_ATTRIBUTES_CHANGED,
      result: LogResult.OK,
      ...journalSubject(req.principal),
      data: { source: 200, rid: req.rid, kid, label: true, descr: descr !== undefined, at: updated.updated },
    }
    await journaled(actor, { kid, event: UPDATE, entry }, () => actor.repository.replace(updated))
    return { status: 200, body: {} }
  })
}

function listed(key: KeyRecord): string {
  return listedType(key.type, key.mode, key.secret !== undefined)
}

function entry(key: KeyRecord) {
  return {
    kid: key.kid,
    created: key.created,
    type: listed(key),
    label: key.label,
    ...(key.descr ? { descr: encodeBase64(key.descr) } : {}),
    updated: key.updated,
  }
}

function pageOf(value: unknown, name: string, fallback: number, min: number): number {
  if (absent(value)) return fallback
  const text = typeof value === 'number' && Number.isInteger(value) ? String(value) : value
  const number = typeof text === 'string' ? wholeNumber(text) : undefined
  if (number === undefined || number < min)
    throw new KeyAttributeError(`\`${name}\` must be a whole number${min > 0 ? ` from ${min}` : ''}`)
  return number
}

/** A page of `keys`; `total` counts every valid key in the repository, also for a search (crypto-contract §2). */
function page(actor: KeystoreContext, keys: readonly KeyRecord[], offset: number, count: number) {
  const list = keys.slice(offset, offset + Math.min(count, PAGE)).map(entry)
  return { offset, total: actor.repository.keys().length, listed: list.length, list }
}

/** `GET /api/keymgmt/list[/:offset[/:count]]`, at most 15 keys per page, oldest first. */
export function listKeys(actor: KeystoreContext, req: CommandRequest): Promise<CommandReply> {
  return guarded(actor, () => {
    const offset = pageOf(req.params?.offset, 'offset', 0, 0)
    const count = pageOf(req.params?.count, 'count', PAGE, 1)
    const { offset: o, total, listed: n, list } = page(actor, actor.repository.keys(), offset, count)
    // Where each record sits in the image, for the certification scripts' dumps: DIAG builds only, list only.
    const located = actor.diag ? list.map((key) => ({ ...key, ...actor.repository.location(key.kid) })) : list
    return {
      status: 200,
      body: { offset: o, deleted: actor.repository.stats().deleted, total, listed: n, list: located },
    }
  })
}

function matches(descr: Uint8Array | undefined, pattern: ReturnType<typeof parseDescrPattern>): boolean {
  if (!descr || descr.length < pattern.bytes.length) return false
  const haystack = Buffer.from(descr)
  if (pattern.anchor === 'prefix') return haystack.subarray(0, pattern.bytes.length).equals(pattern.bytes)
  if (pattern.anchor === 'suffix') return haystack.subarray(descr.length - pattern.bytes.length).equals(pattern.bytes)
  return haystack.includes(Buffer.from(pattern.bytes))
}

/**
 * `POST /api/keymgmt/search {descr*, offset?, limit?}`: no match is an empty list, not an error.
 * Without a token (the gateway let it through only for a `^`-anchored pattern while
 * `allow_keysearch` is on) the same rules are checked again here.
 */
export function searchKeys(actor: KeystoreContext, req: CommandRequest): Promise<CommandReply> {
  return guarded(actor, () => {
    const body = bodyOf(req)
    const pattern = parseDescrPattern(body.descr)
    if (!req.principal && !anonymousSearchAllowed(body, actor.identityState?.allow_keysearch === true)) {
      return fail(401, 'unauthorized', 'A bearer token is required')
    }
    const offset = pageOf(body.offset, 'offset', 0, 0)
    const limit = pageOf(body.limit, 'limit', PAGE, 1)
    return {
      status: 200,
      body: page(
        actor,
        actor.repository.keys().filter((key) => matches(key.descr, pattern)),
        offset,
        limit,
      ),
    }
  })
}
