import { createHmac, timingSafeEqual } from 'node:crypto'
import {
  base64Field,
  type CommandReply,
  type CommandRequest,
  encodeBase64,
  fail,
  type JournalEntry,
} from '../../protocol/index.js'
import type { TlsMaterial } from '../../hal/index.js'
import { nextUts, type ConfigChanges } from '../../machines/index.js'
import { decodeTlsImport } from './tls-import.js'
import { journalSubject } from '../host/index.js'
import type { AuthContext } from './auth-context.js'
import { configUpdated } from './config-updated.js'
import { ConfigRuleError, updatedFields, usableSectors } from './config-rules.js'
import { eraseOwnerMaterial } from './owner-erasure.js'
import { loginSalt } from './login.js'
import { genuineOf } from './personalise.js'

/** `GET /api/system/config`: the configuration, the device's public keys, and a fresh passphrase-change nonce. */
export function readConfig(actor: AuthContext): CommandReply {
  const { config, hal } = actor
  const p = hal.variant === 'P'
  return {
    status: 200,
    body: {
      allow_keysearch: config.allow_keysearch,
      ctx: config.ctx,
      devid: hal.devid,
      dnsd: config.dnsd,
      eid: encodeBase64(hal.enclave.identityPublicKey),
      eid_sign: encodeBase64(hal.enclave.logSigner.publicKey),
      email: config.email,
      // A device restored from a backup: its owner's passphrase keys are derived with the source's eid.
      ...(hal.enclave.credentials()?.salt ? { login_eid: loginSalt(actor) } : {}),
      ...(p ? { genuine_id: hal.enclave.genuineId } : {}),
      http_option_dosprot_mode: config.http_option_dosprot_mode,
      http_option_hsts: config.http_option_hsts,
      hostname: config.hostname,
      iat: config.iat,
      instanceid: config.instanceid,
      ip: config.ip,
      nonce: actor.nonces.issue(actor.now()).jti,
      origin: config.origin,
      spk: actor.session.spk,
      ...(p
        ? {
            storage_capacity: hal.storage.capacitySectors,
            storage_disk0size: config.storage_disk0size,
            storage_mode: config.storage_mode,
          }
        : {}),
      trusted_backend: config.trusted_backend,
      trusted_ts: config.trusted_ts,
      user: config.user,
      uts: config.uts,
    },
  }
}

/** Everything an update asks for, checked before anything is journaled or changed. */
interface UpdatePlan {
  changed: ConfigChanges
  userkey?: Uint8Array
  tls?: TlsMaterial
  genCsr: boolean
}

/**
 * `POST /api/system/config`: a partial update. Every part is checked first; then one journal
 * record (CONFIG_UPDATED, naming what changed but never a key), then the effects.
 */
export async function updateConfig(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  const body = (req.body ?? {}) as Record<string, unknown>
  const subject = journalSubject(req.principal)
  const refuse = async (code: string, message: string) => {
    await actor.journal([configUpdated(406, req.rid, { reason: code }, subject)])
    return fail(406, code, message)
  }
  if (actor.fresh) return fail(409, 'not_personalised', 'The device has no owner yet: personalise it first')
  if (Object.hasOwn(body, 'wipeout')) {
    if (typeof body.wipeout !== 'boolean') return fail(400, 'bad_request', '`wipeout` must be true or false')
    if (!body.wipeout) return refuse('wipeout_false', '`wipeout: false` asks for nothing')
    // A malformed request is refused whole, even when what it asks for is to forget everything.
    try {
      updatedFields(body, actor.config, actor.hal.variant, usableSectors(actor.hal.storage))
    } catch (err) {
      if (err instanceof ConfigRuleError) return fail(err.status, err.code, err.message)
      throw err
    }
    await wipeout(actor, configUpdated(200, req.rid, { wipeout: true }, subject), { rid: req.rid, ...subject })
    return { status: 200, body: { updated: true, reboot_required: true } }
  }
  let plan: UpdatePlan
  try {
    plan = planUpdate(actor, body)
  } catch (err) {
    if (err instanceof ConfigRuleError)
      return err.status === 406 ? refuse(err.code, err.message) : fail(err.status, err.code, err.message)
    throw err
  }

  // A new Disk 0 size repartitions and reformats both disks (contract §6): not while a format waits to finish.
  const reformat = plan.changed.storage_disk0size !== undefined
  if (reformat && !actor.personalisation.can({ type: 'REFORMAT' }))
    return fail(409, 'formatting', 'The disks are being formatted; try again when status shows format "done"')

  const secrets = [...(plan.userkey ? ['userkey'] : []), ...(plan.tls ? ['tls'] : [])]
  const updated = Object.keys(plan.changed).length > 0 || secrets.length > 0
  const uts = nextUts(actor.config.uts, actor.now())
  const changes = updated ? { changed: plan.changed, uts, ...(secrets.length ? { secrets } : {}) } : {}
  const record = configUpdated(200, req.rid, changes, subject)
  // The new size and the format it asks for in one append: a boot finds both, or neither.
  if (reformat) await actor.personalisation.send({ type: 'REFORMAT' }, [record])
  else await actor.journal([record])
  if (plan.userkey) {
    const stored = actor.hal.enclave.credentials()!
    await actor.hal.enclave.setCredentials({ ...stored, user: plan.userkey })
  }
  if (plan.tls) await actor.hal.enclave.stageTls(plan.tls)
  if (updated) {
    actor.applyConfig({ kind: 'updated', changed: plan.changed, uts })
    actor.publish()
  }
  if (reformat) actor.diskFormat.start('reformat')
  const csr = plan.genCsr ? { csr: encodeBase64(await actor.hal.enclave.tlsCsr(actor.config.hostname)) } : {}
  const genuine = plan.genCsr && actor.hal.variant === 'P' ? { genuine: encodeBase64(genuineOf(actor)) } : {}
  return { status: 200, body: { ...csr, ...genuine, updated, ...(plan.tls ? { reboot_required: true } : {}) } }
}

function planUpdate(actor: AuthContext, body: Record<string, unknown>): UpdatePlan {
  const { hal } = actor
  const changed = updatedFields(body, actor.config, hal.variant, usableSectors(hal.storage))
  if (Object.hasOwn(body, 'gen_csr') && typeof body.gen_csr !== 'boolean')
    throw new ConfigRuleError(400, 'bad_request', '`gen_csr` must be true or false')
  const plan: UpdatePlan = { changed, genCsr: body.gen_csr === true }
  const passphrase = ['userkey', 'userkey_nonce', 'userkey_hmac'].filter((f) => Object.hasOwn(body, f))
  if (passphrase.length === 3) plan.userkey = checkPassphraseChange(actor, body)
  else if (passphrase.length > 0)
    throw new ConfigRuleError(400, 'bad_request', '`userkey`, `userkey_nonce` and `userkey_hmac` go together')
  if (Object.hasOwn(body, 'tls')) {
    const tls = decodeTlsImport(body.tls, hal.enclave)
    if (!tls.ok) throw new ConfigRuleError(tls.status, tls.code, tls.message)
    plan.tls = tls.material
  }
  return plan
}

/** The new user key, if its HMAC proves the new passphrase's owner answered this boot's nonce. */
function checkPassphraseChange(actor: AuthContext, body: Record<string, unknown>): Uint8Array {
  const userkey = base64Field(body.userkey)
  const nonce = base64Field(body.userkey_nonce)
  const hmac = base64Field(body.userkey_hmac)
  if (userkey?.length !== 32 || nonce?.length !== 32 || hmac?.length !== 32) {
    throw new ConfigRuleError(
      400,
      'bad_request',
      '`userkey` (32 bytes), `userkey_nonce` (32 bytes) and `userkey_hmac` (32 bytes) must be base64',
    )
  }
  const shared = actor.session.agree(userkey)
  if (!shared)
    throw new ConfigRuleError(400, 'bad_request', '`userkey` is a point of small order, not a usable X25519 public key')
  if (!actor.nonces.consume(body.userkey_nonce, actor.now()))
    throw new ConfigRuleError(406, 'stale_nonce', 'The nonce is unknown, used or expired')
  const expected = createHmac('sha256', shared).update(nonce).digest()
  if (!timingSafeEqual(expected, hmac))
    throw new ConfigRuleError(406, 'bad_hmac', 'The passphrase change is not authenticated')
  // The user key must stay distinct from the master key, or the master would log in as the user.
  const { master } = actor.hal.enclave.credentials()!
  if (master.length === userkey.length && timingSafeEqual(master, userkey))
    throw new ConfigRuleError(406, 'key_in_use', 'The new passphrase is the master passphrase')
  return userkey
}

/** How long a wipeout waits for the keys and disks to be erased before it reboots anyway. */
const WIPEOUT_FOLLOW_MS = 5_000

/**
 * Factory reset through the personalisation machine, journaled with `record` (the CONFIG_UPDATED of
 * whoever asked, request `origin`); the journal survives, then the device reboots. A format under
 * way is cancelled first. Resolves once the wipeout is applied; throws when the enclave or the
 * disks could not be erased (the reboot follows all the same, and the next boot erases them).
 */
export async function wipeout(
  actor: AuthContext,
  record: JournalEntry,
  origin: { rid: string; subject?: string },
): Promise<void> {
  await actor.diskFormat.cancel('wipeout')
  await actor.personalisation.send({ type: 'WIPEOUT' }, [record])
  actor.wipedOut = true
  try {
    // A failure is the answer, once the wipeout is applied.
    await eraseOwnerMaterial(actor, origin)
  } finally {
    // Journaled, so in force whatever failed: the old owner's configuration goes, and the reboot follows.
    actor.applyConfig({ kind: 'wiped' })
    actor.format = undefined
    actor.publish()
    void actor
      .wipeoutFollowed(WIPEOUT_FOLLOW_MS)
      .then(() => actor.reboot())
      .catch((err: Error) => actor.logger.error({ err: err.message }, 'reboot after wipeout failed'))
  }
}
